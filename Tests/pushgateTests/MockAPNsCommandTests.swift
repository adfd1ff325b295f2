import PushMockAPNs
import PushMockSupport
import PushTLS
import PushTestSupport
import Testing

@testable import pushgate

@Suite("mock-apns flags")
struct MockAPNsCommandTests {
    private func parse(_ arguments: [String]) throws -> MockAPNsCommand.Options {
        try #require(try MockAPNsCommand.parse(arguments))
    }

    @Test("no flags: port 8443 on loopback, a generated certificate, any token accepted, nothing recorded")
    func defaults() throws {
        let options = try parse([])
        let configuration = options.configuration
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8443)
        #expect(configuration.recordRequests == 0)
        #expect(configuration.maxTrackedTokens == MockAPNsConfiguration.defaults.maxTrackedTokens)
        #expect(!configuration.verifiesTokens)
        #expect(configuration.maxConcurrentStreams == 1000)
        #expect(configuration.faultSeed == 24301)
        #expect(configuration.validatePayloadJSON)
        guard case .generate = configuration.identity else {
            Issue.record("not a generated identity")
            return
        }
        #expect(options.writeCA == nil && options.statsFile == nil && options.statsInterval == nil)
    }

    @Test("-h and --help ask for the usage", arguments: [["-h"], ["--help"], ["--delay-ms", "5", "--help"]])
    func help(arguments: [String]) throws {
        #expect(try MockAPNsCommand.parse(arguments) == nil)
        #expect(MockAPNsCommand.usage.contains("--goaway-below-in-flight"))
    }

    @Test("every behaviour flag sets its member")
    func behaviourFlags() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let unregistered = try directory.write("unregistered.txt", "aa\n# comment\nbb\n")
        let bad = try directory.write("bad.txt", "cc\n")
        let options = try parse([
            "--listen", ":9443", "--loops", "2", "--write-ca", "/tmp/ca.pem", "--max-streams", "50", "--delay-ms", "10",
            "--fail-500", "0.1", "--fail-503", "0.2", "--fail-429", "0.3", "--seed", "99", "--goaway-after", "5",
            "--goaway-below-in-flight", "--drop-after", "6", "--lower-streams-after", "7", "--stall-after", "8",
            "--faulty-connections", "2", "--expired-token-share", "0.05", "--unregistered", unregistered,
            "--bad-tokens", bad, "--no-json-check", "--stats-file", "/tmp/s.json", "--stats-interval", "30",
        ])
        let configuration = options.configuration
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9443)
        #expect(options.loops == 2)
        #expect(options.writeCA == "/tmp/ca.pem")
        #expect(configuration.maxConcurrentStreams == 50)
        #expect(configuration.responseDelay == .milliseconds(10))
        #expect(configuration.fail500Share == 0.1)
        #expect(configuration.fail503Share == 0.2)
        #expect(configuration.fail429Share == 0.3)
        #expect(configuration.faultSeed == 99)
        #expect(configuration.goAwayAfterStreams == 5)
        #expect(configuration.goAwayBelowInFlight)
        #expect(configuration.dropConnectionAfterStreams == 6)
        #expect(configuration.lowerStreamsAfter == 7)
        #expect(configuration.stallAfterStreams == 8)
        #expect(configuration.faultyConnections == 2)
        #expect(configuration.expiredTokenShare == 0.05)
        #expect(configuration.unregisteredTokens == ["aa", "bb"])
        #expect(configuration.badTokens == ["cc"])
        #expect(!configuration.validatePayloadJSON)
        #expect(options.statsFile == "/tmp/s.json")
        #expect(options.statsInterval == 30)
    }

    @Test("--unregistered given twice adds up")
    func tokenFilesAddUp() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let first = try directory.write("a.txt", "aa\n")
        let second = try directory.write("b.txt", "bb\naa\n")
        #expect(
            try parse(["--unregistered", first, "--unregistered", second]).configuration.unregisteredTokens == [
                "aa", "bb",
            ])
    }

    @Test("--key-id with --p8 or --public-key verifies tokens with that key; --team-id is then required of them")
    func tokenVerification() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try ES256Signer.generateP8()
        let p8 = try directory.write("key.p8", key.privateKeyPEM)
        let pub = try directory.write("key.pub", key.publicKeyPEM)
        let fromP8 = try parse(["--key-id", "KEY1", "--p8", p8, "--team-id", "TEAM"]).configuration
        #expect(fromP8.verifiesTokens)
        #expect(Array(fromP8.verifyTokens.keys) == ["KEY1"])
        #expect(fromP8.teamID == "TEAM")
        let fromPublic = try parse(["--public-key", pub, "--key-id", "KEY2"]).configuration
        #expect(Array(fromPublic.verifyTokens.keys) == ["KEY2"])
        #expect(fromPublic.teamID == nil)
    }

    @Test("--cert and --key serve those files")
    func certificateFiles() throws {
        let options = try parse(["--cert", "/etc/chain.pem", "--key", "/etc/key.pem"])
        guard case .files(certificateChain: let chain, privateKey: let key) = options.configuration.identity else {
            Issue.record("not a file identity")
            return
        }
        #expect(chain == "/etc/chain.pem" && key == "/etc/key.pem")
    }

    @Test(
        "usage errors name the flag",
        arguments: [
            (["--cert", "c.pem"], "--cert and --key go together"),
            (
                ["--cert", "c.pem", "--key", "k.pem", "--write-ca", "ca.pem"],
                "--write-ca: only for a generated certificate"
            ),
            (["--goaway-below-in-flight"], "--goaway-below-in-flight needs --goaway-after N"),
            (["--team-id", "T"], "--team-id needs --key-id and a key"),
            (["--key-id", "K"], "--key-id needs --public-key or --p8 (and the other way round)"),
            (["--fail-429", "1.01"], "--fail-429: must be a share between 0 and 1, e.g. 0.1"),
            (["--expired-token-share", "x"], "--expired-token-share: must be a share between 0 and 1, e.g. 0.1"),
            (["--seed", "0x10"], "--seed: must be a non-negative integer"),
            (["--loops", "257"], "--loops: must be an integer between 1 and 256"),
            (["--drop-after", "0"], "--drop-after: must be an integer between 1 and 2147483647"),
            (["--listen", "127.0.0.1"], "--listen: expected HOST:PORT, e.g. 127.0.0.1:8443"),
            (["--http1"], #"unknown flag "--http1" (see pushgate mock-apns --help)"#),
        ])
    func errors(arguments: [String], message: String) {
        #expect(usageError { try MockAPNsCommand.parse(arguments) } == message)
    }

    @Test("a key file that is not a key is an error")
    func badKeyFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let notAKey = try directory.write("key.p8", "not a key")
        #expect(usageError { try MockAPNsCommand.parse(["--key-id", "K", "--p8", notAKey]) } != nil)
        let missing = directory.path + "/missing.p8"
        #expect(usageError { try MockAPNsCommand.parse(["--p8", missing]) }?.contains(missing) == true)
    }
}
