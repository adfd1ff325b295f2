import PushCommandLine
import PushMockFCM
import PushMockSupport
import PushTLS
import Testing

@testable import pushgate

@Suite("Shared mock flags")
struct MockServerFlagsTests {
    /// A mock-fcm configuration (the shared flags set the same members on mock-adm's).
    private static let base = MockFCMConfiguration(
        projectID: "p", clientEmail: "c@p.iam.gserviceaccount.com",
        assertionVerifier: try! RSAVerifier(scheme: .rs256, publicKeyPEM: try! RSAKeyPair.generate().publicKeyPEM))

    /// `arguments` read as shared behaviour flags and applied to ``base``.
    private func apply(_ arguments: [String]) throws -> MockFCMConfiguration {
        var flags = FlagReader(arguments)
        var configuration = Self.base
        while let flag = flags.next() {
            let change: ((inout MockFCMConfiguration) -> Void)? = try MockServerRun.setting(
                flag, &flags, listenExample: "127.0.0.1:8444")
            let apply = try #require(change, "\(flag) is a shared flag")
            apply(&configuration)
        }
        return configuration
    }

    @Test("every shared behaviour flag sets its member")
    func settings() throws {
        let configuration = try apply([
            "--listen", "[::1]:9444", "--max-streams", "40", "--delay-ms", "150", "--goaway-after", "9", "--http1",
            "--token-lifetime", "60", "--fail-500", "0.1", "--fail-503", "0.2", "--retry-after", "5", "--seed", "7",
        ])
        #expect(configuration.host == "::1")
        #expect(configuration.port == 9444)
        #expect(configuration.maxConcurrentStreams == 40)
        #expect(configuration.responseDelay == .milliseconds(150))
        #expect(configuration.goAwayAfterStreams == 9)
        #expect(configuration.http1)
        #expect(configuration.accessTokenLifetime == 60)
        #expect(configuration.fail500Share == 0.1)
        #expect(configuration.fail503Share == 0.2)
        #expect(configuration.retryAfterSeconds == 5)
        #expect(configuration.faultSeed == 7)
        #expect(!(try apply(["--http1", "--http2"])).http1, "the last version flag wins")
        #expect(try apply(["--retry-after", "0"]).retryAfterSeconds == nil, "0 means no Retry-After")
    }

    @Test("flags that are not shared ones are left to the mock")
    func notShared() throws {
        for flag in ["--token-path", "--unregistered", "--loops", "--cert", "-h"] {
            var flags = FlagReader([flag, "x"])
            _ = flags.next()
            let change: ((inout MockFCMConfiguration) -> Void)? = try MockServerRun.setting(
                flag, &flags, listenExample: "127.0.0.1:8444")
            #expect(change == nil, "\(flag)")
        }
    }

    @Test(
        "shared flag errors name the flag",
        arguments: [
            (["--max-streams", "0"], "--max-streams: must be an integer between 1 and 1000000"),
            (["--delay-ms", "600001"], "--delay-ms: must be an integer between 0 and 600000"),
            (["--goaway-after", "0"], "--goaway-after: must be an integer between 1 and 2147483647"),
            (["--token-lifetime", "86401"], "--token-lifetime: must be an integer between 1 and 86400"),
            (["--retry-after", "-1"], "--retry-after: must be an integer between 0 and 86400"),
            (["--seed", "-1"], "--seed: must be a non-negative integer"),
            (["--fail-500", "2"], "--fail-500: must be a share between 0 and 1, e.g. 0.1"),
            (["--listen", "8444"], "--listen: expected HOST:PORT, e.g. 127.0.0.1:8444"),
        ])
    func errors(arguments: [String], message: String) {
        #expect(usageError { try apply(arguments) } == message)
    }

    @Test("the run flags: loops, certificate files, the CA file and the stats outputs")
    func runFlags() throws {
        var run = MockServerRun(name: "mock-test")
        var flags = FlagReader([
            "--loops", "3", "--cert", "c.pem", "--key", "k.pem", "--write-ca", "ca.pem", "--stats-interval", "10",
            "--stats-file", "s.json", "--other",
        ])
        while let flag = flags.next() {
            let read = try run.read(flag, &flags)
            #expect(read == (flag != "--other"), "\(flag)")
        }
        #expect(run.loops == 3)
        #expect(run.certificate == "c.pem" && run.key == "k.pem")
        #expect(run.writeCA == "ca.pem")
        #expect(run.statsInterval == 10)
        #expect(run.statsFile == "s.json")
        #expect(MockServerRun(name: "x").loops >= 1, "one loop per core by default")
        var bad = FlagReader(["--stats-interval", "0"])
        _ = bad.next()
        #expect(
            usageError { try run.read("--stats-interval", &bad) }
                == "--stats-interval: must be an integer between 1 and 86400")
    }

    @Test("the identity: generated unless --cert and --key are given, which go together and exclude --write-ca")
    func identity() throws {
        var settings = MockServerSettings()
        try MockServerRun(name: "m").applyIdentity(to: &settings)
        guard case .generate = settings.identity else {
            Issue.record("no flags: not a generated identity")
            return
        }
        var run = MockServerRun(name: "m")
        run.certificate = "chain.pem"
        run.key = "key.pem"
        try run.applyIdentity(to: &settings)
        guard case .files(certificateChain: let chain, privateKey: let key) = settings.identity else {
            Issue.record("--cert and --key: not files")
            return
        }
        #expect(chain == "chain.pem" && key == "key.pem")
        run.writeCA = "ca.pem"
        #expect(usageError { try run.applyIdentity(to: &settings) } == "--write-ca: only for a generated certificate")
        var half = MockServerRun(name: "m")
        half.key = "key.pem"
        #expect(usageError { try half.applyIdentity(to: &settings) } == "--cert and --key go together")
    }

    @Test("the description lists the loops, version, streams and token lifetime, then what differs from defaults")
    func describe() throws {
        var run = MockServerRun(name: "m")
        run.loops = 2
        #expect(run.describe(Self.base) == ["loops=2", "http=2", "max_streams=100", "token_lifetime=3600s"])
        let changed = try apply([
            "--http1", "--delay-ms", "20", "--fail-500", "0.5", "--fail-503", "0.25", "--goaway-after", "4",
        ])
        #expect(
            run.describe(changed) == [
                "loops=2", "http=1.1", "max_streams=100", "token_lifetime=3600s", "delay=0.02 seconds", "fail500=0.5",
                "fail503=0.25", "goaway_after=4",
            ])
    }
}
