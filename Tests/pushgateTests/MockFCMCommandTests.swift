import PushCredentials
import PushMockFCM
import PushMockSupport
import PushTLS
import PushTestSupport
import Testing

@testable import pushgate

@Suite("mock-fcm flags")
struct MockFCMCommandTests {
    private func parse(_ arguments: [String]) throws -> MockFCMCommand.Options {
        try #require(try MockFCMCommand.parse(arguments))
    }

    @Test("--write-service-account: a generated key for project pushgate-mock (or --project), port 8444")
    func generatedAccount() throws {
        let options = try parse(["--write-service-account", "/tmp/sa.json"])
        #expect(options.writeServiceAccount == "/tmp/sa.json")
        #expect(options.generatedKey?.hasPrefix("-----BEGIN PRIVATE KEY-----") == true)
        let configuration = options.configuration
        #expect(configuration.projectID == "pushgate-mock")
        #expect(configuration.clientEmail == "pushgate-mock@pushgate-mock.iam.gserviceaccount.com")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8444)
        #expect(configuration.recordMessages == 0)
        #expect(!configuration.http1)
        #expect(configuration.tokenPath == "/token")
        #expect(configuration.retryAfterSeconds == 1)
        #expect(configuration.faultSeed == 24301)
        #expect(options.run.name == "mock-fcm")
        let project = try parse(["--project", "other", "--write-service-account", "/tmp/sa.json"])
        #expect(project.configuration.projectID == "other")
    }

    @Test("--service-account: that account's project, client and token_uri are accepted; it excludes a generated one")
    func givenAccount() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try RSAKeyPair.generate()
        let account = try GoogleServiceAccount(
            projectID: "real-project", privateKeyID: "kid", privateKey: key.privateKeyPEM,
            clientEmail: "sender@real-project.iam.gserviceaccount.com", tokenURI: "https://oauth2.example/token")
        let file = try directory.write("account.json", String(decoding: account.serialized(), as: UTF8.self))
        let options = try parse(["--service-account", file])
        #expect(options.generatedKey == nil && options.writeServiceAccount == nil)
        #expect(options.configuration.projectID == "real-project")
        #expect(options.configuration.clientEmail == "sender@real-project.iam.gserviceaccount.com")
        #expect(options.configuration.extraAudiences == ["https://oauth2.example/token"])
        #expect(
            usageError { try MockFCMCommand.parse(["--service-account", file, "--write-service-account", "x.json"]) }
                == "--service-account and --write-service-account exclude each other")
    }

    @Test("-h and --help ask for the usage, even without credentials", arguments: [["-h"], ["--http1", "--help"]])
    func help(arguments: [String]) throws {
        #expect(try MockFCMCommand.parse(arguments) == nil)
        #expect(MockFCMCommand.usage.contains("--sender-mismatch-prefix P"))
    }

    @Test("mock-fcm's own flags, the shared ones and the run flags together")
    func flags() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let unregistered = try directory.write("u.txt", "u1\nu2\n")
        let mismatched = try directory.write("m.txt", "m1\n")
        let invalid = try directory.write("i.txt", "i1\n")
        let options = try parse([
            "--write-service-account", "/tmp/sa.json", "--token-path", "/oauth/token", "--audience", "https://a",
            "--audience", "https://b", "--unregistered", unregistered, "--unregistered-prefix", "dead-",
            "--sender-mismatch", mismatched, "--sender-mismatch-prefix", "other-", "--invalid-tokens", invalid,
            "--unavailable-every", "10", "--fail-429", "0.3", "--http1", "--max-streams", "20", "--listen",
            "0.0.0.0:9444", "--loops", "2", "--stats-file", "/tmp/fcm.json",
        ])
        let configuration = options.configuration
        #expect(configuration.tokenPath == "/oauth/token")
        #expect(configuration.extraAudiences == ["https://a", "https://b"])
        #expect(configuration.unregisteredTokens == ["u1", "u2"])
        #expect(configuration.unregisteredPrefix == "dead-")
        #expect(configuration.mismatchedSenderTokens == ["m1"])
        #expect(configuration.mismatchedSenderPrefix == "other-")
        #expect(configuration.invalidTokens == ["i1"])
        #expect(configuration.unavailableEvery == 10)
        #expect(configuration.fail429Share == 0.3)
        #expect(configuration.http1)
        #expect(configuration.maxConcurrentStreams == 20)
        #expect(configuration.host == "0.0.0.0" && configuration.port == 9444, "--listen wins over the default port")
        #expect(options.run.loops == 2)
        #expect(options.run.statsFile == "/tmp/fcm.json")
    }

    @Test("--cert and --key give the server that identity")
    func certificateFiles() throws {
        let options = try parse(["--write-service-account", "sa.json", "--cert", "c.pem", "--key", "k.pem"])
        guard case .files(certificateChain: let chain, privateKey: let key) = options.configuration.identity else {
            Issue.record("not a file identity")
            return
        }
        #expect(chain == "c.pem" && key == "k.pem")
    }

    @Test(
        "usage errors name the flag",
        arguments: [
            ([], "needs --service-account FILE or --write-service-account FILE (see --help)"),
            (["--write-service-account", "x", "--token-path", "token"], "--token-path: must start with /"),
            (
                ["--write-service-account", "x", "--unavailable-every", "0"],
                "--unavailable-every: must be an integer between 1 and 2147483647"
            ),
            (["--write-service-account", "x", "--cert", "c.pem"], "--cert and --key go together"),
            (["--write-service-account", "x", "--bogus"], #"unknown flag "--bogus" (see pushgate mock-fcm --help)"#),
            (["--bogus", "--write-service-account", "x"], #"unknown flag "--bogus" (see pushgate mock-fcm --help)"#),
        ])
    func errors(arguments: [String], message: String) {
        #expect(usageError { try MockFCMCommand.parse(arguments) } == message)
    }

    @Test("a service-account file that is missing or malformed is an error naming the file")
    func badAccountFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let malformed = try directory.write("bad.json", #"{"type":"service_account"}"#)
        #expect(usageError { try MockFCMCommand.parse(["--service-account", malformed]) }?.contains(malformed) == true)
        let missing = directory.path + "/none.json"
        #expect(usageError { try MockFCMCommand.parse(["--service-account", missing]) }?.contains(missing) == true)
    }
}
