/// What a send or stream run derives from its options: how many calls are in flight, over how many
/// connections, the two phases' workloads and their time limits.
struct BenchPlan {
    /// Send: RPCs in flight (with --rate, at most in flight). Stream: SendStream calls.
    let concurrency: Int
    /// Tokens in each request message; 0 for publish, whose answer carries no results.
    let tokensPerRequest: Int
    /// Client connections to the gateway (connected: at most one per call in flight).
    let grpcConnections: Int
    /// `--warmup` RPCs before the measurement; nil with --warmup 0.
    let warmup: BenchWorkload?
    let measured: BenchWorkload
    /// How long the measured phase sends: --duration, else 10 s, or up to 600 s to reach --count.
    let duration: Duration
    /// How long a phase waits for what is in flight once it stops sending: the deadline and 5 s.
    let drainLimit: Duration

    /// - Parameter tokens: the tokens to send to, when they are not made from the options.
    init(_ options: BenchOptions, tokens: [String]? = nil) {
        let concurrency = options.concurrency ?? (options.rate != nil && options.mode != .stream ? 1000 : 4)
        let tokensPerRequest = options.mode == .publish ? 0 : options.tokensPerSend
        self.concurrency = concurrency
        self.tokensPerRequest = tokensPerRequest
        grpcConnections = options.grpcConnections ?? Self.connections(for: concurrency, mode: options.mode)
        let message = Bench.requestMessage(options, tokens: tokens)
        let timeout = Duration.milliseconds(Int(options.timeout * 1000))
        drainLimit = .seconds(Int(options.timeout.rounded(.up)) + 5)
        warmup =
            options.warmup > 0
            ? BenchWorkload(
                mode: options.mode, message: message, tokensPerRequest: tokensPerRequest,
                concurrency: min(options.warmup, concurrency), pipeline: options.pipeline, rate: nil,
                maxRequests: options.warmup, timeout: timeout, authorization: options.apiKey.map { "Bearer \($0)" })
            : nil
        measured = BenchWorkload(
            mode: options.mode, message: message, tokensPerRequest: tokensPerRequest, concurrency: concurrency,
            pipeline: options.pipeline, rate: options.rate,
            maxRequests: Self.requests(for: options.count, tokensPerRequest: tokensPerRequest), timeout: timeout,
            authorization: options.apiKey.map { "Bearer \($0)" })
        duration = .milliseconds(Int((options.duration ?? (options.count == nil ? 10 : 600)) * 1000))
    }

    /// The connections the driver opens: --grpc-connections, but never more than calls in flight.
    var clientConnections: Int { min(grpcConnections, max(1, concurrency)) }

    /// One connection per 128 RPCs in flight, or per 64 SendStream calls.
    static func connections(for concurrency: Int, mode: BenchMode) -> Int {
        mode == .stream ? max(1, (concurrency + 63) / 64) : max(1, (concurrency + 127) / 128)
    }

    /// The request messages that carry `count` notifications (the last one may carry more); no
    /// limit without --count.
    static func requests(for count: Int?, tokensPerRequest: Int) -> Int {
        guard let count else { return Int.max }
        return tokensPerRequest > 0 ? (count + tokensPerRequest - 1) / tokensPerRequest : count
    }
}
