import Testing

@testable import PushBench

@Suite("Bench flags")
struct BenchOptionsTests {
    /// The usage error `arguments` get, as printed after "pushgate bench: "; nil if they parse.
    private func error(_ arguments: [String]) -> String? {
        do {
            _ = try BenchOptions.parse(arguments)
            return nil
        } catch {
            return "\(error)"
        }
    }

    private func parse(_ arguments: [String]) throws -> BenchOptions {
        try #require(try BenchOptions.parse(arguments))
    }

    @Test("no flags: a 10-second closed-loop Send run of 1,000 APNs tokens, 4 in flight, against a mock it starts")
    func defaults() throws {
        let options = try parse([])
        #expect(options.provider == .apns)
        #expect(options.mode == .send)
        #expect(options.subscribers == 100_000)
        #expect(options.tokensPerSend == 1000)
        #expect(options.concurrency == nil)
        #expect(options.pipeline == 16)
        #expect(options.rate == nil && options.count == nil && options.duration == nil)
        #expect(options.warmup == 4)
        #expect(options.timeout == 30)
        #expect(options.grpcConnections == nil)
        #expect(options.clientLoops == 1)
        #expect(options.connections == 1)
        #expect(options.target == nil && options.gatewayPID == nil && options.gatewayMetrics == nil)
        #expect(!options.verifyTokens && !options.keepFiles && !options.json && !options.quiet)
    }

    @Test(
        "-h and --help ask for the usage, wherever they are",
        arguments: [["-h"], ["--help"], ["--duration", "3", "--help"], ["--help", "--no-such-flag"]])
    func help(arguments: [String]) throws {
        #expect(try BenchOptions.parse(arguments) == nil)
        #expect(BenchOptions.usage.contains("--tokens-per-send N"))
    }

    @Test("every flag of a run bench starts itself lands in its option")
    func spawnFlags() throws {
        let options = try parse([
            "--provider", "fcm", "--mode", "stream", "--subscribers", "5", "--tokens-per-send", "7", "--concurrency",
            "9",
            "--pipeline", "3", "--count", "1000", "--duration", "2.5", "--warmup", "0", "--timeout", "1.5",
            "--grpc-connections", "2", "--client-loops", "3", "--connections", "4", "--gateway-loops", "5",
            "--queue-limit", "600", "--mock-loops", "6", "--delay-ms", "0", "--max-streams", "50", "--http-version",
            "1.1",
            "--keep-files", "--json", "--quiet",
        ])
        #expect(options.provider == .fcm)
        #expect(options.mode == .stream)
        #expect(options.subscribers == 5)
        #expect(options.tokensPerSend == 7)
        #expect(options.concurrency == 9)
        #expect(options.pipeline == 3)
        #expect(options.count == 1000)
        #expect(options.duration == 2.5)
        #expect(options.warmup == 0)
        #expect(options.timeout == 1.5)
        #expect(options.grpcConnections == 2)
        #expect(options.clientLoops == 3)
        #expect(options.connections == 4)
        #expect(options.gatewayLoops == 5)
        #expect(options.queueLimit == 600)
        #expect(options.mockLoops == 6)
        #expect(options.delayMs == 0)
        #expect(options.maxStreams == 50)
        #expect(options.httpVersion == "1.1")
        #expect(options.keepFiles && options.json && options.quiet)
    }

    @Test("a running mock's flags, per provider")
    func runningMockFlags() throws {
        let apns = try parse(["--apns", "https://127.0.0.1:9443", "--apns-ca", "/tmp/ca.pem", "--rate", "250.5"])
        #expect(apns.apnsURL == "https://127.0.0.1:9443" && apns.apnsCA == "/tmp/ca.pem")
        #expect(apns.rate == 250.5)
        let fcm = try parse([
            "--provider", "fcm", "--fcm", "https://f", "--fcm-ca", "c", "--service-account", "sa.json",
        ])
        #expect(fcm.fcmURL == "https://f" && fcm.fcmCA == "c" && fcm.serviceAccount == "sa.json")
        let adm = try parse([
            "--provider", "adm", "--adm", "https://a", "--adm-ca", "c", "--adm-client-id", "id",
            "--adm-client-secret-file", "s",
        ])
        #expect(
            adm.admURL == "https://a" && adm.admCA == "c" && adm.admClientID == "id" && adm.admClientSecretFile == "s")
        let verify = try parse(["--verify-tokens"])
        #expect(verify.verifyTokens)
    }

    @Test("a running gateway's flags, with --flag=value and [v6] hosts")
    func targetFlags() throws {
        let options = try parse([
            "--target=[::1]:50051", "--gateway-pid=1234", "--gateway-metrics", "127.0.0.1:9464", "--mode=publish",
        ])
        #expect(options.target?.host == "::1" && options.target?.port == 50051)
        #expect(options.gatewayPID == 1234)
        #expect(options.gatewayMetrics?.host == "127.0.0.1" && options.gatewayMetrics?.port == 9464)
        #expect(options.mode == .publish)
        // A value that starts with "--" is given with "=": after a space it reads as a forgotten value.
        #expect(try parse(["--apns=--x", "--apns-ca", "ca"]).apnsURL == "--x")
        #expect(throws: (any Error).self) { try parse(["--apns", "--x", "--apns-ca", "ca"]) }
    }

    static let valueFlags = [
        "--provider", "--mode", "--subscribers", "--tokens-per-send", "--concurrency", "--pipeline", "--rate",
        "--count",
        "--duration", "--warmup", "--timeout", "--grpc-connections", "--client-loops", "--connections",
        "--gateway-loops",
        "--queue-limit", "--mock-loops", "--delay-ms", "--max-streams", "--apns", "--apns-ca", "--fcm", "--fcm-ca",
        "--service-account", "--adm", "--adm-ca", "--adm-client-id", "--adm-client-secret-file", "--http-version",
        "--target", "--gateway-metrics", "--gateway-pid",
    ]

    @Test("a flag without its value says which flag", arguments: valueFlags)
    func missingValue(flag: String) {
        #expect(error([flag]) == "\(flag): needs a value")
        #expect(error(["--json", flag]) == "\(flag): needs a value")
    }

    static let integerFlags: [(String, ClosedRange<Int>)] = [
        ("--subscribers", 1...100_000_000), ("--tokens-per-send", 1...1_000_000), ("--concurrency", 1...100_000),
        ("--pipeline", 1...10_000), ("--count", 1...2_147_483_647), ("--warmup", 0...1_000_000),
        ("--grpc-connections", 1...1000), ("--client-loops", 1...64), ("--connections", 1...1000),
        ("--gateway-loops", 1...256), ("--queue-limit", 1...2_147_483_647), ("--mock-loops", 1...256),
        ("--delay-ms", 0...600_000), ("--max-streams", 1...1_000_000), ("--gateway-pid", 1...2_147_483_647),
    ]

    @Test(
        "an integer flag takes integers in its range and names itself and the range otherwise", arguments: integerFlags)
    func integerFlag(flag: String, range: ClosedRange<Int>) throws {
        let message = "\(flag): must be an integer between \(range.lowerBound) and \(range.upperBound)"
        for bad in ["x", "1.5", "", "\(range.lowerBound - 1)", "\(range.upperBound + 1)"] {
            #expect(error([flag, bad]) == message, "\(flag) \(bad)")
        }
        // The bounds themselves are accepted (--gateway-pid wants --target).
        let context = flag == "--gateway-pid" ? ["--target", "127.0.0.1:1"] : []
        #expect(error(context + [flag, "\(range.lowerBound)"]) == nil)
        #expect(error(context + [flag, "\(range.upperBound)"]) == nil)
    }

    @Test(
        "a number flag takes numbers above 0 up to its limit and names itself and the limit otherwise",
        arguments: [
            ("--rate", "10,000,000", 10_000_000.0), ("--duration", "86,400", 86_400), ("--timeout", "3,600", 3600),
        ])
    func numberFlag(flag: String, limit: String, max: Double) {
        let message = "\(flag): must be a number above 0 and at most \(limit)"
        for bad in ["0", "-1", "x", "", "\(max + 1)", "nan"] {
            #expect(error([flag, bad]) == message, "\(flag) \(bad)")
        }
        #expect(error([flag, "0.001"]) == nil)
        #expect(error([flag, "\(max)"]) == nil)
    }

    @Test(
        "a choice flag lists its choices and quotes what it got",
        arguments: [
            (["--provider", "gcm"], #"--provider: apns, fcm, adm, webpush or hms (not "gcm")"#),
            (["--provider", "APNS"], #"--provider: apns, fcm, adm, webpush or hms (not "APNS")"#),
            (["--mode", "unary"], #"--mode: send, stream, publish or encrypt (not "unary")"#),
            (["--provider", "fcm", "--http-version", "3"], #"--http-version: auto, 2 or 1.1 (not "3")"#),
            (["--provider=adm", "--http-version="], #"--http-version: auto, 2 or 1.1 (not "")"#),
        ])
    func choiceFlag(arguments: [String], message: String) {
        #expect(error(arguments) == message)
    }

    @Test("--http-version takes auto, 2 and 1.1 for fcm and adm", arguments: ["auto", "2", "1.1"])
    func httpVersions(version: String) throws {
        #expect(try parse(["--provider", "fcm", "--http-version", version]).httpVersion == version)
        #expect(try parse(["--provider", "adm", "--http-version", version]).httpVersion == version)
    }

    @Test(
        "an address flag wants HOST:PORT with a port from 1 to 65535",
        arguments: [
            (["--target", "nope"], "--target: expected HOST:PORT, e.g. 127.0.0.1:50051"),
            (["--target", "127.0.0.1:0"], "--target: expected HOST:PORT, e.g. 127.0.0.1:50051"),
            (["--target", "127.0.0.1:65536"], "--target: expected HOST:PORT, e.g. 127.0.0.1:50051"),
            (["--target", "127.0.0.1:http"], "--target: expected HOST:PORT, e.g. 127.0.0.1:50051"),
            (
                ["--target", "127.0.0.1:1", "--gateway-metrics", "nope"],
                "--gateway-metrics: expected HOST:PORT, e.g. 127.0.0.1:9464"
            ),
            (["--gateway-metrics", "host:"], "--gateway-metrics: expected HOST:PORT, e.g. 127.0.0.1:9464"),
        ])
    func addressFlag(arguments: [String], message: String) {
        #expect(error(arguments) == message)
    }

    @Test(
        "an unknown flag or a stray word is named", arguments: ["--bogus", "--Duration", "bench", "-q", "--verbose=1"])
    func unknownFlag(flag: String) {
        let name = flag.hasPrefix("--") ? String(flag.prefix { $0 != "=" }) : flag
        #expect(error([flag]) == "unknown flag \"\(name)\" (see pushgate bench --help)")
    }

    @Test(
        "flags that go together, or only with others, say which",
        arguments: [
            (["--apns", "u"], "--apns and --apns-ca go together"),
            (["--apns-ca", "c"], "--apns and --apns-ca go together"),
            (
                ["--provider", "fcm", "--fcm", "u", "--fcm-ca", "c"],
                "--fcm, --fcm-ca and --service-account go together"
            ),
            (["--service-account", "s"], "--fcm, --fcm-ca and --service-account go together"),
            (
                ["--provider", "adm", "--adm", "u", "--adm-ca", "c", "--adm-client-id", "i"],
                "--adm, --adm-ca, --adm-client-id and --adm-client-secret-file go together"
            ),
            (
                ["--adm-client-secret-file", "s"],
                "--adm, --adm-ca, --adm-client-id and --adm-client-secret-file go together"
            ),
            (["--provider", "fcm", "--apns", "u", "--apns-ca", "c"], "--apns: only with --provider apns"),
            (
                ["--provider", "adm", "--verify-tokens"],
                "--verify-tokens: only with --provider apns (mock-fcm and mock-adm always check access tokens)"
            ),
            (
                ["--http-version", "2"],
                "--http-version: only with --provider fcm, adm, webpush or hms (APNs is HTTP/2 only)"
            ),
            (["--fcm", "u", "--fcm-ca", "c", "--service-account", "s"], "--fcm: only with --provider fcm"),
            (
                [
                    "--provider", "fcm", "--adm", "u", "--adm-ca", "c", "--adm-client-id", "i",
                    "--adm-client-secret-file", "s",
                ],
                "--adm: only with --provider adm"
            ),
            (
                ["--provider", "webpush", "--mode", "publish"],
                "--mode publish: not with --provider webpush (subscriptions come from the mock)"
            ),
            (
                ["--provider", "webpush", "--target", "127.0.0.1:50051"],
                "--target: not with --provider webpush (subscriptions come from the mock it starts)"
            ),
            (["--gateway-pid", "5"], "--gateway-pid goes with --target"),
            (
                ["--apns", "u", "--apns-ca", "c", "--delay-ms", "5"],
                "--apns/--fcm/--adm: the mock flags only apply to a mock that bench starts itself"
            ),
            (
                ["--provider", "fcm", "--fcm", "u", "--fcm-ca", "c", "--service-account", "s", "--mock-loops", "2"],
                "--apns/--fcm/--adm: the mock flags only apply to a mock that bench starts itself"
            ),
            (["--mode", "stream", "--rate", "5"], "--rate: only with --mode send (or publish)"),
        ])
    func combinations(arguments: [String], message: String) {
        #expect(error(arguments) == message)
    }

    @Test(
        "--target takes none of the flags for what bench starts itself",
        arguments: [
            ["--queue-limit", "5"], ["--gateway-loops", "2"], ["--mock-loops", "2"], ["--delay-ms", "1"],
            ["--max-streams", "10"], ["--verify-tokens"], ["--apns", "u", "--apns-ca", "c"], ["--connections", "2"],
            ["--provider", "fcm", "--fcm", "u", "--fcm-ca", "c", "--service-account", "s"],
            [
                "--provider", "adm", "--adm", "u", "--adm-ca", "c", "--adm-client-id", "i", "--adm-client-secret-file",
                "s",
            ],
            ["--provider", "fcm", "--http-version", "auto"],
        ])
    func targetExcludesSpawnFlags(arguments: [String]) {
        #expect(
            error(["--target", "127.0.0.1:50051"] + arguments)
                == "--target: the gateway and mock flags only apply to what bench starts itself")
    }

    @Test("the first mistake is the one reported")
    func firstMistake() {
        #expect(error(["--count", "0", "--bogus"]) == "--count: must be an integer between 1 and 2147483647")
        #expect(error(["--bogus", "--count", "0"]) == "unknown flag \"--bogus\" (see pushgate bench --help)")
    }
}
