import PushMetrics

/// The table `pushgate bench` prints: a header, then one row per figure, named on the left.
extension BenchResult {
    /// A row: its name (empty for a continuation) and its text.
    typealias Row = (name: String, value: String)

    func table() -> String {
        let rows = throughputRows() + latencyRows() + errorRows() + scheduleRows() + resourceRows() + machineRows()
        return Self.render(header: "pushgate bench: \(workloadDescription)\n\(setup)", rows)
    }

    /// The header, and the rows between two rules with their names padded to the longest.
    static func render(header: String, _ rows: [Row]) -> String {
        let width = rows.map(\.name.count).max() ?? 0
        let rule = String(repeating: "-", count: width + 2) + "+" + String(repeating: "-", count: 60)
        var out = header + "\n" + rule + "\n"
        for (name, value) in rows {
            out += name + String(repeating: " ", count: width - name.count) + "  | " + value + "\n"
        }
        return out + rule
    }

    private func throughputRows() -> [Row] {
        var rows: [Row] = []
        if options.mode != .publish {
            rows.append(
                (
                    "notifications/s",
                    formatCount(Int(notificationsPerSecond.rounded()))
                        + "  (\(formatCount(report.tally.results)) results, \(formatCount(report.tally.delivered)) delivered, "
                        + "in \(formatDecimal(seconds, places: 2)) s)"
                ))
        }
        rows.append(
            ("RPC/s", formatDecimal(rpcsPerSecond, places: 1) + "  (\(formatCount(report.requests)) RPCs answered OK)"))
        return rows
    }

    /// The RPCs' latency, with --rate that of the RPCs that met no stall, and the gateway's
    /// provider requests.
    private func latencyRows() -> [Row] {
        let latency = report.latency
        var rows: [Row] = [
            (
                "RPC latency (ms)",
                Self.quantiles(latency) + "  max \(formatMillis(latency.total > 0 ? latency.maxValue : nil))"
            )
        ]
        if let clean = latencyOutsideStalls {
            let covered = Int(clean.total) + rpcsInStalls
            rows.append(
                (
                    "  outside stalls (ms)",
                    Self.quantiles(clean)
                        + "  (\(formatCount(Int(clean.total))) RPCs; \(formatCount(rpcsInStalls)) were in flight "
                        + "while the machine stalled"
                        + (covered < report.requests ? "; of the first \(formatCount(covered)) RPCs)" : ")")
                ))
        }
        if let provider = providerLatency, let mean = provider.mean {
            func ms(_ seconds: Double?) -> String { seconds.map { formatDecimal($0 * 1000, places: 3) } ?? "-" }
            rows.append(
                (
                    "provider requests (ms)",
                    "mean \(ms(mean))  p50 ~\(ms(provider.quantile(0.5)))  p90 ~\(ms(provider.quantile(0.9)))  "
                        + "p99 ~\(ms(provider.quantile(0.99)))  (gateway histogram, \(formatCount(Int(provider.count))) requests)"
                ))
        }
        return rows
    }

    /// "p50 …  p90 …  p99 …  p999 …" in milliseconds.
    private static func quantiles(_ histogram: LatencyHistogram) -> String {
        "p50 \(formatMillis(histogram.quantile(0.5)))  p90 \(formatMillis(histogram.quantile(0.9)))  "
            + "p99 \(formatMillis(histogram.quantile(0.99)))  p999 \(formatMillis(histogram.quantile(0.999)))"
    }

    /// The 12 most frequent errors, then how many other reasons there were.
    private func errorRows() -> [Row] {
        let errors = self.errors
        guard !errors.isEmpty else { return [("errors", "none")] }
        var rows: [Row] = errors.prefix(12).enumerated().map { i, error in
            (i == 0 ? "errors" : "", "\(formatCount(error.1))  \(error.0)")
        }
        if errors.count > 12 { rows.append(("", "… \(errors.count - 12) more reasons")) }
        return rows
    }

    /// With --rate: how far behind its schedule the client got.
    private func scheduleRows() -> [Row] {
        guard options.rate != nil else { return [] }
        return [
            (
                "rate schedule",
                "max lag \(formatMillis(report.maxScheduleLagNanos)) ms, sends skipped (in-flight cap) \(formatCount(report.skippedSends))"
            )
        ]
    }

    /// Memory and CPU of the gateway, the mock and the client, and the mock's request count.
    private func resourceRows() -> [Row] {
        var rows: [Row] = []
        func mib(_ kib: Int?) -> String { kib.map { formatDecimal(Double($0) / 1024, places: 1) + " MiB" } ?? "-" }
        func core(_ percent: Double) -> String { formatDecimal(percent, places: 0) + "% of one core" }
        if rssEndKiB != nil || gatewayCPU != nil {
            rows.append(
                (
                    "gateway RSS",
                    "idle \(mib(rssIdleKiB))  after warm-up \(mib(rssAfterWarmupKiB))  after run \(mib(rssEndKiB))  peak \(mib(rssPeakKiB))"
                ))
            rows.append(("gateway CPU", gatewayCPU.map(core) ?? "-"))
        }
        let mock = options.provider.mock
        if let mockCPU { rows.append(("\(mock) CPU", core(mockCPU))) }
        if let clientCPU { rows.append(("bench client CPU", core(clientCPU))) }
        if let mockRequests { rows.append(("\(mock) requests", formatCount(mockRequests) + " (incl. warm-up)")) }
        return rows
    }

    /// The stall probe's figures (with --rate), and whether the drain limit cut the run short.
    private func machineRows() -> [Row] {
        var rows: [Row] = []
        if let stall = stallSummary {
            func us(_ nanos: UInt64) -> String { formatDecimal(Double(nanos) / 1000, places: 0) }
            rows.append(
                (
                    "machine stall probe",
                    "fixed work: p50 \(us(stall.p50)) µs  p99 \(us(stall.p99)) µs  max \(us(stall.max)) µs; "
                        + "over 5× the median \(formatDecimal(stall.slowFraction * 100, places: 2))% of the time"
                ))
        }
        if outcome.drainTimedOut { rows.append(("note", "the drain limit passed with calls in flight")) }
        return rows
    }
}
