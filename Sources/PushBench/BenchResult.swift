import PushMetrics

/// Everything a run measured, as a table or one JSON object.
struct BenchResult {
    let options: BenchOptions
    let concurrency: Int
    let grpcConnections: Int
    let outcome: BenchDriver.Outcome
    var setup = ""
    var rssIdleKiB: Int?
    var rssAfterWarmupKiB: Int?
    var rssEndKiB: Int?
    var rssPeakKiB: Int?
    var gatewayThreads: Int?
    var gatewayCPU: Double?
    var mockCPU: Double?
    var clientCPU: Double?
    var mockRequests: Int?
    var gatewayExit: Int32?
    /// The durations of the stall probe's fixed pieces of work (``BenchStallProbe``), with --rate.
    var stallProbe: LatencyHistogram?
    /// With --rate: the latencies of the RPCs in flight at no time the stall probe saw the machine
    /// stalled (``StallWindows``), and how many RPCs were in flight during a stall.
    var latencyOutsideStalls: LatencyHistogram?
    var rpcsInStalls = 0
    /// The gateway's provider-request latency over the measured run (``ProviderLatency``; from the gateway's histogram).
    var providerLatency: HistogramReading?

    /// Of the stall probe: its median piece, its 99th percentile and slowest, and the share of
    /// pieces that took over 5× the median (the machine was stalled).
    var stallSummary: (p50: UInt64, p99: UInt64, max: UInt64, slowFraction: Double)? {
        guard let probe = stallProbe, let p50 = probe.quantile(0.5), let p99 = probe.quantile(0.99) else { return nil }
        return (p50, p99, probe.maxValue, probe.fraction(above: p50 * StallWindows.factor))
    }

    init(options: BenchOptions, concurrency: Int, grpcConnections: Int, outcome: BenchDriver.Outcome) {
        self.options = options
        self.concurrency = concurrency
        self.grpcConnections = grpcConnections
        self.outcome = outcome
    }

    var seconds: Double { Double(outcome.elapsedNanos) / 1e9 }
    var report: BenchConnectionReport { outcome.report }
    var notificationsPerSecond: Double { seconds > 0 ? Double(report.tally.results) / seconds : 0 }
    var deliveredPerSecond: Double { seconds > 0 ? Double(report.tally.delivered) / seconds : 0 }
    var rpcsPerSecond: Double { seconds > 0 ? Double(report.requests) / seconds : 0 }

    /// Every error: RPC-level (gRPC status) and per-token (Result status and reason).
    var errors: [(String, Int)] {
        var all: [String: Int] = [:]
        for (key, count) in report.rpcErrors { all["RPC " + key, default: 0] += count }
        for (key, count) in report.tally.reasons { all["result " + key, default: 0] += count }
        if report.unfinished > 0 { all["unfinished at the drain limit", default: 0] += report.unfinished }
        return all.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
    }

    var workloadDescription: String {
        var parts = ["provider=\(options.provider.rawValue)", "mode=\(options.mode.rawValue)"]
        if options.mode != .publish { parts.append("tokens/send=\(options.tokensPerSend)") }
        if let rate = options.rate {
            parts.append("rate=\(formatDecimal(rate, places: 0))/s (max in flight \(concurrency))")
        } else if options.mode == .stream {
            parts.append("streams=\(concurrency) pipeline=\(options.pipeline)")
        } else {
            parts.append("concurrency=\(concurrency)")
        }
        parts.append("grpc_connections=\(min(grpcConnections, concurrency))")
        if let count = options.count { parts.append("count=\(count)") }
        if let duration = options.duration { parts.append("duration=\(formatDecimal(duration, places: 1))s") }
        return parts.joined(separator: " ")
    }
}
