import PushCommandLine

#if canImport(Glibc)
    import Glibc
#endif

/// What `pushgate bench` was asked to do: its flags, read by ``parse(_:)``, and its --help text.
public struct BenchOptions {
    public static let usage = """
        Usage: pushgate bench [flags]

        Load-tests a gateway through its gRPC API (Push/Send or Push/SendStream) and prints a progress
        line per second, then a table: notifications/s, RPC latency p50/p90/p99/p999, errors by reason
        (from the Results and the gRPC statuses), and the gateway's RSS and CPU.

        With no --target it starts, as child processes of this binary, `pushgate mock-apns` (or
        `pushgate mock-fcm` / `mock-adm`, with --provider fcm / adm) on 127.0.0.1 and `pushgate serve`
        configured to it (a generated .p8 key, service account or client credentials in a temp dir),
        and stops them at the end. Nothing leaves 127.0.0.1. Runs stop by themselves (count or
        duration).

        What to send:
          --provider P              apns (default), fcm, adm, webpush or hms (a Huawei v3 app on
                                    mock-hms: 130-byte push tokens, a PS256 JWT per hour). apns: 64-hex-digit device tokens, an
                                    alert (title, body). fcm: the app is an FCM app ("platform":
                                    "fcm"), tokens are FCM registration tokens (bench-<n>:APA91b…,
                                    152 bytes), and the notification has an alert and data
                                    ({"bench":"1"}); the gateway fetches an OAuth2 access token
                                    from the mock's token endpoint with the generated service
                                    account. adm: an ADM app, 700-byte registration ids
                                    (amzn1.adm-registration.v3.bench-<n>.…, as long as real v3
                                    ids), the same alert and data, an access token from mock-adm's
                                    Login-with-Amazon endpoint. webpush: a webpush app (a generated
                                    VAPID key), subscriptions handed out by the mock-webpush it
                                    starts, the same alert and data, each message encrypted per
                                    subscription; the mock decrypts every 100th
          --http-version V          fcm, adm, webpush, hms: the app's http_version (auto, 2 or 1.1); the mock bench
                                    starts speaks it too (mock-fcm --http1 for 1.1, mock-adm or mock-hms --http2
                                    for 2; auto: the mock's default, HTTP/2 for mock-fcm and
                                    HTTP/1.1 for mock-adm, as Google and Amazon)
          --mode MODE               send (Push/Send, default), stream (Push/SendStream) or publish
                                    (one Push/Publish to a topic of --subscribers endpoints, timed
                                    until GetMessage says the fan-out completed), or encrypt
                                    (no gateway: Web Push's encryption per message and
                                    subscriber on one thread, for --duration or --count)
          --subscribers N           publish: endpoints subscribed to the topic (default 100000, at
                                    most 100000000), bulk-loaded into the gateway's store before it
                                    starts, 50,000 a transaction
          --deliver-after-ms N      publish: schedule it (deliver_at) N ms after the call, and time
                                    the fan-out from then: a scheduled fan-out's speed
          --delivery-log L          publish: the gateway's delivery log: off, or the share of
                                    successes it keeps in percent (0-100; default: the gateway's
                                    default, 0)
          --store S                 publish: the gateway's store, an empty PostgreSQL database URL
                                    (postgres://…) or SQLite file, instead of a fresh SQLite file in
                                    the temp dir (the subscribers are loaded into it, 50,000 a
                                    transaction, then VACUUM (ANALYZE) on PostgreSQL)
          --tokens-per-send N       device tokens in each request (default 1000)
          --concurrency N           send: RPCs in flight (default 4); with --rate: at most this many
                                    in flight (default 1000). stream: SendStream calls (default 4)
          --pipeline N              stream: requests outstanding on each call (default 16)
          --rate R                  send: a fixed rate of R RPC/s (open loop) instead of a closed loop.
                                    The table then also shows the machine stall probe: a thread
                                    timing the same fixed ~25 µs of arithmetic every ms, so a
                                    latency tail can be told apart from the machine's own stalls,
                                    and the latency of the RPCs that met no stall on their own
          --count N                 stop after N notifications (tokens) have been sent
          --duration S              stop sending after S seconds (default 10 without --count)
          --warmup N                RPCs sent and answered before measuring (default 4)
          --timeout S               each Send's deadline, grpc-timeout (default 30)
          --grpc-connections N      client connections to the gateway (default: 1 per 128 in flight)
          --client-loops N          client event-loop threads (default 1)
          --client C                builtin (default) or h2load: nghttp2's h2load (on PATH) is the gRPC
                                    client (h2c, each request a gRPC-framed SendRequest, content-type
                                    application/grpc, te: trailers) with --grpc-connections
                                    connections (default 1) and --concurrency streams in flight on
                                    each (default 100), for --duration (default 10 s) after a 1 s
                                    warm-up. --mode stream: one request message per SendStream call.
                                    h2load sees HTTP statuses only, so the table also shows the
                                    gateway's own count of delivered notifications over the run

        The gateway and mock it starts (ignored with --target):
          --connections N           provider (APNs, FCM or ADM) connections of the gateway's app (default 1)
          --gateway-loops N         gateway event loops (default: one per core)
          --queue-limit N           the gateway's queue_limit
          --mock-loops N            mock event loops (default: one per core)
          --delay-ms N              the mock waits N ms before each answer
          --max-streams N           the mock's MAX_CONCURRENT_STREAMS over HTTP/2 (default: mock-apns
                                    1000, mock-fcm and mock-adm 100)
          --verify-tokens           apns: the mock verifies provider tokens (JWT) with the generated
                                    key (mock-fcm always checks its OAuth2 access tokens)
          --apns URL --apns-ca FILE deliver to an APNs look-alike that is already running (e.g. one
                                    started by scripts/bench.sh) instead of starting a mock
          --fcm URL --fcm-ca FILE --service-account FILE
                                    --provider fcm: deliver to a mock-fcm that is already running,
                                    with a service account it accepts (its token_uri is used)
          --adm URL --adm-ca FILE --adm-client-id ID --adm-client-secret-file FILE
                                    --provider adm: deliver to a mock-adm that is already running,
                                    with client credentials it accepts (its token endpoint is
                                    URL/auth/o2/token)
          --keep-files              keep the temp dir (key, config, child logs) and print its path

        A gateway that is already running:
          --target HOST:PORT        bench this gateway (its first app); start nothing. A gateway
                                    with api_keys: the key in PUSHGATE_API_KEY
          --gateway-pid PID         read its RSS and CPU from /proc/PID
          --gateway-metrics HOST:PORT
                                    its metrics_listen address: the table then shows its
                                    provider-request latency (the bench's own gateway always does)

        Output:
          --json                    print one JSON object instead of the table
          --quiet                   no progress lines (they go to standard error)
          -h, --help                this text

        Latencies are per RPC (stream: per request message), from submission to the response, in a
        fixed-size log-linear histogram (values within 3%). Provider-request latency is the gateway's
        own pushgate_provider_request_seconds over the measured run (submit to APNs or FCM until its
        response): its mean is exact, its quantiles are interpolated within the histogram's buckets.
        Exit status: 0 when requests completed, 1 when none did, 2 bad usage, 3 set-up failed.
        """

    var provider = BenchProvider.apns
    var mode = BenchMode.send
    var subscribers = 100_000
    var deliverAfterMs = 0
    /// `--delivery-log`: nil (the gateway's default), off (`enabled: false`), or a sample percent.
    var deliveryLog: DeliveryLogChoice?
    /// `--store`: publish into this store (an empty SQLite file path or PostgreSQL database URL)
    /// instead of a fresh SQLite file in the temp dir.
    var store: String?
    var tokensPerSend = 1000
    var concurrency: Int?
    var pipeline = 16
    var rate: Double?
    var count: Int?
    var duration: Double?
    var warmup = 4
    var timeout = 30.0
    var grpcConnections: Int?
    var clientLoops = 1
    var client = BenchClientKind.builtin
    var connections = 1
    var gatewayLoops: Int?
    var queueLimit: Int?
    var mockLoops: Int?
    var delayMs: Int?
    var maxStreams: Int?
    var verifyTokens = false
    var apnsURL: String?
    var apnsCA: String?
    var fcmURL: String?
    var fcmCA: String?
    var serviceAccount: String?
    var admURL: String?
    var admCA: String?
    var admClientID: String?
    var admClientSecretFile: String?
    var httpVersion: String?
    var keepFiles = false
    var target: (host: String, port: Int)?
    /// With --target: the key sent as `authorization: Bearer <key>`, from PUSHGATE_API_KEY (an
    /// environment variable, as for `pushgate send`, so the key stays out of `ps`).
    var apiKey: String?
    var gatewayPID: pid_t?
    var gatewayMetrics: (host: String, port: Int)?
    var json = false
    var quiet = false

    /// The options `arguments` (what follows `bench` on the command line) ask for; nil for `-h` or
    /// `--help`. A mistake throws a ``CommandLineError`` that names the flag.
    public static func parse(_ arguments: [String]) throws -> BenchOptions? {
        var flags = FlagReader(arguments)
        var options = BenchOptions()
        while let flag = flags.next() {
            if flag == "-h" || flag == "--help" { return nil }
            if try options.readWorkloadFlag(flag, &flags) { continue }
            if try options.readSpawnFlag(flag, &flags) { continue }
            if try options.readTargetOrOutputFlag(flag, &flags) { continue }
            throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate bench --help)")
        }
        try options.checkTogether()
        try options.checkProvider()
        try options.checkTarget()
        try options.checkMode()
        if options.target != nil, let key = getenv("PUSHGATE_API_KEY").map({ String(cString: $0) }), !key.isEmpty {
            options.apiKey = key
        }
        return options
    }

    // MARK: Flags, in the usage's sections; false: not one of them

    /// What to send.
    private mutating func readWorkloadFlag(_ flag: String, _ flags: inout FlagReader) throws -> Bool {
        switch flag {
        case "--provider":
            let value = try flags.value(for: flag)
            guard let provider = BenchProvider(rawValue: value) else {
                throw CommandLineError("--provider: apns, fcm, adm, webpush or hms (not \(value.debugDescription))")
            }
            self.provider = provider
        case "--http-version":
            let value = try flags.value(for: flag)
            guard ["auto", "2", "1.1"].contains(value) else {
                throw CommandLineError("--http-version: auto, 2 or 1.1 (not \(value.debugDescription))")
            }
            httpVersion = value
        case "--mode":
            let value = try flags.value(for: flag)
            guard let mode = BenchMode(rawValue: value) else {
                throw CommandLineError("--mode: send, stream, publish or encrypt (not \(value.debugDescription))")
            }
            self.mode = mode
        case "--subscribers": subscribers = try flags.int(for: flag, range: 1...100_000_000)
        case "--store": store = try flags.value(for: flag)
        case "--deliver-after-ms": deliverAfterMs = try flags.int(for: flag, range: 1...600_000)
        case "--delivery-log":
            let value = try flags.value(for: flag)
            if value == "off" {
                deliveryLog = .off
            } else if let percent = Double(value), (0...100).contains(percent) {
                deliveryLog = .successSamplePercent(percent)
            } else {
                throw CommandLineError("--delivery-log: off or a percent from 0 to 100 (not \(value.debugDescription))")
            }
        case "--tokens-per-send": tokensPerSend = try flags.int(for: flag, range: 1...1_000_000)
        case "--concurrency": concurrency = try flags.int(for: flag, range: 1...100_000)
        case "--pipeline": pipeline = try flags.int(for: flag, range: 1...10_000)
        case "--rate": rate = try Self.positive(&flags, flag, max: 10_000_000)
        case "--count": count = try flags.int(for: flag, range: 1...Int(Int32.max))
        case "--duration": duration = try Self.positive(&flags, flag, max: 86_400)
        case "--warmup": warmup = try flags.int(for: flag, range: 0...1_000_000)
        case "--timeout": timeout = try Self.positive(&flags, flag, max: 3600)
        case "--grpc-connections": grpcConnections = try flags.int(for: flag, range: 1...1000)
        case "--client-loops": clientLoops = try flags.int(for: flag, range: 1...64)
        case "--client":
            let value = try flags.value(for: flag)
            guard let kind = BenchClientKind(rawValue: value) else {
                throw CommandLineError("--client: builtin or h2load (not \(value.debugDescription))")
            }
            client = kind
        default: return false
        }
        return true
    }

    /// The gateway and mock bench starts (or a running mock it points its gateway at).
    private mutating func readSpawnFlag(_ flag: String, _ flags: inout FlagReader) throws -> Bool {
        switch flag {
        case "--connections": connections = try flags.int(for: flag, range: 1...1000)
        case "--gateway-loops": gatewayLoops = try flags.int(for: flag, range: 1...256)
        case "--queue-limit": queueLimit = try flags.int(for: flag, range: 1...Int(Int32.max))
        case "--mock-loops": mockLoops = try flags.int(for: flag, range: 1...256)
        case "--delay-ms": delayMs = try flags.int(for: flag, range: 0...600_000)
        case "--max-streams": maxStreams = try flags.int(for: flag, range: 1...1_000_000)
        case "--verify-tokens": verifyTokens = true
        case "--apns": apnsURL = try flags.value(for: flag)
        case "--apns-ca": apnsCA = try flags.value(for: flag)
        case "--fcm": fcmURL = try flags.value(for: flag)
        case "--fcm-ca": fcmCA = try flags.value(for: flag)
        case "--service-account": serviceAccount = try flags.value(for: flag)
        case "--adm": admURL = try flags.value(for: flag)
        case "--adm-ca": admCA = try flags.value(for: flag)
        case "--adm-client-id": admClientID = try flags.value(for: flag)
        case "--adm-client-secret-file": admClientSecretFile = try flags.value(for: flag)
        case "--keep-files": keepFiles = true
        default: return false
        }
        return true
    }

    /// A gateway that is already running, and the output.
    private mutating func readTargetOrOutputFlag(_ flag: String, _ flags: inout FlagReader) throws -> Bool {
        switch flag {
        case "--target": target = try flags.hostPort(for: flag, example: "127.0.0.1:50051")
        case "--gateway-metrics": gatewayMetrics = try flags.hostPort(for: flag, example: "127.0.0.1:9464")
        case "--gateway-pid": gatewayPID = pid_t(try flags.int(for: flag, range: 1...Int(Int32.max)))
        case "--json": json = true
        case "--quiet": quiet = true
        default: return false
        }
        return true
    }

    // MARK: Rules between flags, checked in this order once all are read

    /// How many of a running FCM mock's three flags, and of a running ADM mock's four, were given.
    private var fcmFlagCount: Int { [fcmURL, fcmCA, serviceAccount].filter { $0 != nil }.count }
    private var admFlagCount: Int { [admURL, admCA, admClientID, admClientSecretFile].filter { $0 != nil }.count }

    /// A running mock's flags come all together or not at all.
    private func checkTogether() throws {
        if (apnsURL == nil) != (apnsCA == nil) {
            throw CommandLineError("--apns and --apns-ca go together")
        }
        if fcmFlagCount != 0 && fcmFlagCount != 3 {
            throw CommandLineError("--fcm, --fcm-ca and --service-account go together")
        }
        if admFlagCount != 0 && admFlagCount != 4 {
            throw CommandLineError("--adm, --adm-ca, --adm-client-id and --adm-client-secret-file go together")
        }
    }

    /// The provider's own flags only with that provider.
    private func checkProvider() throws {
        if provider != .apns {
            if apnsURL != nil { throw CommandLineError("--apns: only with --provider apns") }
            if verifyTokens {
                throw CommandLineError(
                    "--verify-tokens: only with --provider apns (mock-fcm and mock-adm always check access tokens)")
            }
        } else if httpVersion != nil {
            throw CommandLineError(
                "--http-version: only with --provider fcm, adm, webpush or hms (APNs is HTTP/2 only)")
        }
        if provider == .webpush && mode == .publish {
            throw CommandLineError("--mode publish: not with --provider webpush (subscriptions come from the mock)")
        }
        if provider == .webpush && target != nil {
            throw CommandLineError("--target: not with --provider webpush (subscriptions come from the mock it starts)")
        }
        if fcmFlagCount != 0 && provider != .fcm { throw CommandLineError("--fcm: only with --provider fcm") }
        if admFlagCount != 0 && provider != .adm { throw CommandLineError("--adm: only with --provider adm") }
    }

    /// What bench starts is configured only when it starts it: not with --target, and a running
    /// mock's own settings not at all.
    private func checkTarget() throws {
        if target != nil {
            let spawnOnly = [
                queueLimit != nil, gatewayLoops != nil, mockLoops != nil, delayMs != nil, maxStreams != nil,
                verifyTokens,
                apnsURL != nil, connections != 1, fcmURL != nil, admURL != nil, httpVersion != nil,
            ]
            if spawnOnly.contains(true) {
                throw CommandLineError("--target: the gateway and mock flags only apply to what bench starts itself")
            }
        } else if gatewayPID != nil {
            throw CommandLineError("--gateway-pid goes with --target")
        }
        if apnsURL != nil || fcmURL != nil || admURL != nil,
            delayMs != nil || maxStreams != nil || verifyTokens || mockLoops != nil
        {
            throw CommandLineError("--apns/--fcm/--adm: the mock flags only apply to a mock that bench starts itself")
        }
    }

    /// A fixed rate is a schedule of unary calls; a stream's requests follow its answers.
    private func checkMode() throws {
        if deliveryLog != nil && mode != .publish {
            throw CommandLineError("--delivery-log: only with --mode publish")
        }
        if store != nil && mode != .publish { throw CommandLineError("--store: only with --mode publish") }
        if deliverAfterMs > 0 && mode != .publish {
            throw CommandLineError("--deliver-after-ms: only with --mode publish")
        }
        if rate != nil && mode == .stream {
            throw CommandLineError("--rate: only with --mode send (or publish)")
        }
        if client == .h2load {
            guard mode == .send || mode == .stream else {
                throw CommandLineError("--client h2load: only with --mode send or stream")
            }
            if rate != nil || count != nil {
                throw CommandLineError("--client h2load: runs for --duration (no --rate, --count)")
            }
            if provider == .webpush { throw CommandLineError("--client h2load: not with --provider webpush") }
        }
    }

    private static func positive(_ flags: inout FlagReader, _ flag: String, max: Double) throws -> Double {
        let text = try flags.value(for: flag)
        guard let value = Double(text), value > 0, value <= max else {
            throw CommandLineError("\(flag): must be a number above 0 and at most \(formatCount(Int(max)))")
        }
        return value
    }
}

/// Who sends the gRPC requests: bench's own client, or h2load (``BenchH2load``).
enum BenchClientKind: String, Sendable {
    case builtin, h2load
}

/// The provider the bench's app delivers to.
enum BenchProvider: String, Sendable {
    case apns, fcm, adm, webpush, hms

    /// `APNs`, `FCM`, `ADM`, `Web Push`.
    var name: String {
        switch self {
        case .apns: "APNs"
        case .fcm: "FCM"
        case .adm: "ADM"
        case .webpush: "Web Push"
        case .hms: "Huawei Push Kit"
        }
    }

    /// The mock that plays it: `mock-apns`, `mock-fcm`, `mock-adm`.
    var mock: String { "mock-" + rawValue }

    /// Token `i` in this provider's shape.
    func token(_ i: Int) -> String {
        switch self {
        case .apns: BenchTokens.apns(i)
        case .fcm: BenchTokens.fcm(i)
        case .adm: BenchTokens.adm(i)
        case .hms: BenchTokens.hms(i)
        // Subscriptions come from the mock push service (BenchSetup); this is only a placeholder.
        case .webpush: "subscription-\(i)"
        }
    }
}

/// What `--delivery-log` sets in the gateway's `delivery_log`.
enum DeliveryLogChoice: Equatable {
    case off
    case successSamplePercent(Double)
}
