import PushMockADM
import PushMockSupport
import PushTestSupport
import Testing

@testable import pushgate

@Suite("mock-adm flags")
struct MockADMCommandTests {
    private func parse(_ arguments: [String]) throws -> MockADMCommand.Options {
        try #require(try MockADMCommand.parse(arguments))
    }

    @Test("generated credentials written out: port 8445, HTTP/1.1, Amazon-shaped credentials")
    func generated() throws {
        let options = try parse(["--write-credentials", "/tmp/adm.json"])
        #expect(options.writeCredentials == "/tmp/adm.json")
        #expect(options.writeClientSecret == nil)
        let configuration = options.configuration
        #expect(configuration.credentials.clientID.hasPrefix("amzn1.application-oa2-client."))
        #expect(configuration.credentials.clientSecret.count == 64)
        #expect(configuration.port == 8445)
        #expect(configuration.http1, "HTTP/1.1, as Amazon speaks it")
        #expect(configuration.recordMessages == 0)
        #expect(configuration.tokenPath == "/auth/o2/token")
        #expect(options.run.name == "mock-adm")
        let named = try parse(["--client-id", "my-client", "--write-client-secret", "/tmp/secret"])
        #expect(named.configuration.credentials.clientID == "my-client", "--client-id alone: a secret is generated")
        #expect(named.configuration.credentials.clientSecret.count == 64)
        #expect(named.writeClientSecret == "/tmp/secret")
    }

    @Test("given credentials: --client-id with --client-secret-file (whitespace trimmed), or --credentials JSON")
    func given() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let secret = try directory.write("secret", "  s3cret \n")
        let fromFile = try parse(["--client-id", "amzn1.x", "--client-secret-file", secret])
        #expect(fromFile.configuration.credentials == MockADMCredentials(clientID: "amzn1.x", clientSecret: "s3cret"))
        let json = try directory.write("credentials.json", #"{"client_id":"id-2","client_secret":"secret-2"}"#)
        let fromJSON = try parse(["--credentials", json])
        #expect(fromJSON.configuration.credentials == MockADMCredentials(clientID: "id-2", clientSecret: "secret-2"))
    }

    @Test("-h and --help ask for the usage, even without credentials", arguments: [["-h"], ["--http2", "--help"]])
    func help(arguments: [String]) throws {
        #expect(try MockADMCommand.parse(arguments) == nil)
        #expect(MockADMCommand.usage.contains("--canonical-prefix P"))
    }

    @Test("mock-adm's own flags, the shared ones and the run flags together")
    func flags() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let unregistered = try directory.write("u.txt", "gone-1\ngone-2\n")
        let invalid = try directory.write("i.txt", "bad-1\n")
        let canonical = try directory.write("c.txt", "# old new\nold-1 new-1\n  old-2\tnew-2  \n")
        let options = try parse([
            "--write-credentials", "/tmp/adm.json", "--token-path", "/auth/O2/token", "--unregistered", unregistered,
            "--unregistered-prefix", "gone-", "--invalid", invalid, "--invalid-prefix", "bad-", "--canonical",
            canonical, "--canonical-prefix", "old-", "--rate-limit-every", "4", "--http2", "--token-lifetime", "5",
            "--fail-503", "0.5", "--retry-after", "0", "--stats-interval", "2",
        ])
        let configuration = options.configuration
        #expect(configuration.tokenPath == "/auth/O2/token")
        #expect(configuration.unregisteredIDs == ["gone-1", "gone-2"])
        #expect(configuration.unregisteredPrefix == "gone-")
        #expect(configuration.invalidIDs == ["bad-1"])
        #expect(configuration.invalidPrefix == "bad-")
        #expect(configuration.canonicalIDs == ["old-1": "new-1", "old-2": "new-2"])
        #expect(configuration.canonicalPrefix == "old-")
        #expect(configuration.rateLimitEvery == 4)
        #expect(!configuration.http1)
        #expect(configuration.accessTokenLifetime == 5)
        #expect(configuration.fail503Share == 0.5)
        #expect(configuration.retryAfterSeconds == nil)
        #expect(options.run.statsInterval == 2)
    }

    @Test("canonical files: a later line for the same id wins; a line without exactly two fields is an error naming it")
    func canonicalPairs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let twice = try directory.write("twice.txt", "a b\na c\n")
        #expect(try MockADMCommand.canonicalPairs(in: twice) == ["a": "c"])
        let bad = try directory.write("bad.txt", "a b\nonly-one\n")
        #expect(
            usageError { try MockADMCommand.canonicalPairs(in: bad) }
                == #"\#(bad): expected lines "OLD NEW", got "only-one""#)
        let three = try directory.write("three.txt", "a b c\n")
        #expect(
            usageError { try MockADMCommand.canonicalPairs(in: three) }
                == #"\#(three): expected lines "OLD NEW", got "a b c""#)
    }

    @Test("usage errors name the flag")
    func errors() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let secret = try directory.write("secret", "s")
        let blank = try directory.write("blank", " \n\t")
        let json = try directory.write("c.json", #"{"client_id":"a","client_secret":"b"}"#)
        let notJSON = try directory.write("n.json", #"{"client_id":"a"}"#)
        let cases: [([String], String)] = [
            (
                [],
                "generated credentials must be written out for clients: add --write-credentials FILE or "
                    + "--write-client-secret FILE, or give --client-id ID --client-secret-file FILE (see --help)"
            ),
            (["--client-secret-file", secret], "--client-secret-file needs --client-id"),
            (["--client-id", "x", "--client-secret-file", blank], "\(blank): the client secret is empty"),
            (
                ["--credentials", json, "--client-id", "x"],
                "--credentials excludes --client-id and --client-secret-file"
            ),
            (["--credentials", notJSON], #"\#(notJSON): expected {"client_id":"…","client_secret":"…"}"#),
            (["--credentials", json, "--token-path", "auth"], "--token-path: must start with /"),
            (
                ["--credentials", json, "--rate-limit-every", "0"],
                "--rate-limit-every: must be an integer between 1 and 2147483647"
            ),
            (
                ["--credentials", json, "--fail-429", "0.1"],
                #"unknown flag "--fail-429" (see pushgate mock-adm --help)"#
            ),
        ]
        for (arguments, message) in cases {
            #expect(usageError { try MockADMCommand.parse(arguments) } == message, "\(arguments)")
        }
    }
}
