import PushPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The progress line, about once a second on standard error: rates since the previous line,
/// totals so far, the gateway's RSS.
struct BenchProgress {
    let tokensPerRequest: Int
    let gatewayPID: pid_t?
    private var last = (requests: 0, results: 0, at: UInt64(0))

    init(tokensPerRequest: Int, gatewayPID: pid_t?) {
        self.tokensPerRequest = tokensPerRequest
        self.gatewayPID = gatewayPID
    }

    /// The line for `elapsed` nanoseconds into the phase, from the phase's counters.
    mutating func line(_ shared: BenchShared, elapsed: UInt64) -> String {
        let requests = shared.completedRequests.load(ordering: .relaxed)
        let results = shared.completedResults.load(ordering: .relaxed)
        let delivered = shared.deliveredResults.load(ordering: .relaxed)
        let failed = shared.failedRequests.load(ordering: .relaxed)
        let rss = gatewayPID.flatMap { ProcessSample.read(pid: $0) }?.rssKiB
        return line(
            requests: requests, results: results, delivered: delivered, failedRPCs: failed, elapsed: elapsed,
            gatewayRSSKiB: rss)
    }

    mutating func line(
        requests: Int, results: Int, delivered: Int, failedRPCs: Int, elapsed: UInt64, gatewayRSSKiB: Int?
    ) -> String {
        let seconds = Double(elapsed - last.at) / 1e9
        var line = "bench: \(formatDecimal(Double(elapsed) / 1e9, places: 0))s"
        if tokensPerRequest > 0 {
            line += "  notifications/s \(formatCount(Int(Double(results - last.results) / seconds)))"
        }
        line += "  RPC/s \(formatCount(Int(Double(requests - last.requests) / seconds)))"
        line += "  total \(formatCount(results)) delivered \(formatCount(delivered))"
        line += "  failed RPCs \(formatCount(failedRPCs))"
        if let gatewayRSSKiB { line += "  gateway RSS \(formatDecimal(Double(gatewayRSSKiB) / 1024, places: 1)) MiB" }
        last = (requests, results, elapsed)
        return line
    }
}
