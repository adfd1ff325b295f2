extension BenchResult {
    func table() -> String {
        var rows: [(String, String)] = []
        let latency = report.latency
        if options.mode != .publish {
            rows.append(("notifications/s", formatCount(Int(notificationsPerSecond.rounded()))
                + "  (\(formatCount(report.tally.results)) results, \(formatCount(report.tally.delivered)) delivered, in \(formatDecimal(seconds, places: 2)) s)"))
        }
        rows.append(("RPC/s", formatDecimal(rpcsPerSecond, places: 1) + "  (\(formatCount(report.requests)) RPCs answered OK)"))
        rows.append((
            "RPC latency (ms)",
            "p50 \(formatMillis(latency.quantile(0.5)))  p90 \(formatMillis(latency.quantile(0.9)))  "
                + "p99 \(formatMillis(latency.quantile(0.99)))  p999 \(formatMillis(latency.quantile(0.999)))  "
                + "max \(formatMillis(latency.total > 0 ? latency.maxValue : nil))"
        ))
        if let clean = latencyOutsideStalls {
            let covered = Int(clean.total) + rpcsInStalls
            rows.append((
                "  outside stalls (ms)",
                "p50 \(formatMillis(clean.quantile(0.5)))  p90 \(formatMillis(clean.quantile(0.9)))  "
                    + "p99 \(formatMillis(clean.quantile(0.99)))  p999 \(formatMillis(clean.quantile(0.999)))  "
                    + "(\(formatCount(Int(clean.total))) RPCs; \(formatCount(rpcsInStalls)) were in flight while the machine stalled"
                    + (covered < report.requests ? "; of the first \(formatCount(covered)) RPCs)" : ")")))
        }
        if let provider = providerLatency, let mean = provider.mean {
            func ms(_ seconds: Double?) -> String { seconds.map { formatDecimal($0 * 1000, places: 3) } ?? "-" }
            rows.append((
                "provider requests (ms)",
                "mean \(ms(mean))  p50 ~\(ms(provider.quantile(0.5)))  p90 ~\(ms(provider.quantile(0.9)))  "
                    + "p99 ~\(ms(provider.quantile(0.99)))  (gateway histogram, \(formatCount(Int(provider.count))) requests)"))
        }
        let errors = self.errors
        if errors.isEmpty {
            rows.append(("errors", "none"))
        } else {
            for (i, (key, count)) in errors.prefix(12).enumerated() {
                rows.append((i == 0 ? "errors" : "", "\(formatCount(count))  \(key)"))
            }
            if errors.count > 12 { rows.append(("", "… \(errors.count - 12) more reasons")) }
        }
        if options.rate != nil {
            rows.append(("rate schedule", "max lag \(formatMillis(report.maxScheduleLagNanos)) ms, sends skipped (in-flight cap) \(formatCount(report.skippedSends))"))
        }
        func mib(_ kib: Int?) -> String { kib.map { formatDecimal(Double($0) / 1024, places: 1) + " MiB" } ?? "-" }
        if rssEndKiB != nil || gatewayCPU != nil {
            rows.append(("gateway RSS", "idle \(mib(rssIdleKiB))  after warm-up \(mib(rssAfterWarmupKiB))  after run \(mib(rssEndKiB))  peak \(mib(rssPeakKiB))"))
            rows.append(("gateway CPU", gatewayCPU.map { formatDecimal($0, places: 0) + "% of one core" } ?? "-"))
        }
        let mock = options.provider.mock
        if let mockCPU { rows.append(("\(mock) CPU", formatDecimal(mockCPU, places: 0) + "% of one core")) }
        if let clientCPU { rows.append(("bench client CPU", formatDecimal(clientCPU, places: 0) + "% of one core")) }
        if let mockRequests { rows.append(("\(mock) requests", formatCount(mockRequests) + " (incl. warm-up)")) }
        if let stall = stallSummary {
            func us(_ nanos: UInt64) -> String { formatDecimal(Double(nanos) / 1000, places: 0) }
            rows.append((
                "machine stall probe",
                "fixed work: p50 \(us(stall.p50)) µs  p99 \(us(stall.p99)) µs  max \(us(stall.max)) µs; "
                    + "over 5× the median \(formatDecimal(stall.slowFraction * 100, places: 2))% of the time"))
        }
        if outcome.drainTimedOut { rows.append(("note", "the drain limit passed with calls in flight")) }
        let width = rows.map(\.0.count).max() ?? 0
        var out = "pushgate bench: \(workloadDescription)\n\(setup)\n"
        let rule = String(repeating: "-", count: width + 2) + "+" + String(repeating: "-", count: 60)
        out += rule + "\n"
        for (name, value) in rows {
            out += name + String(repeating: " ", count: width - name.count) + "  | " + value + "\n"
        }
        out += rule
        return out
    }
}
