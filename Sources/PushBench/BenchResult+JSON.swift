extension BenchResult {
    func json() -> String {
        var fields: [(String, String)] = []
        func number(_ value: Double?) -> String { value.map { formatDecimal($0, places: 3) } ?? "null" }
        func int(_ value: Int?) -> String { value.map { "\($0)" } ?? "null" }
        func ms(_ nanos: UInt64?) -> String { nanos.map { formatDecimal(Double($0) / 1e6, places: 4) } ?? "null" }
        let latency = report.latency
        fields.append(("mode", jsonString(options.mode.rawValue)))
        fields.append(("tokens_per_send", options.mode == .publish ? "0" : "\(options.tokensPerSend)"))
        fields.append(("concurrency", "\(concurrency)"))
        fields.append(("pipeline", options.mode == .stream ? "\(options.pipeline)" : "null"))
        fields.append(("rate", number(options.rate)))
        fields.append(("grpc_connections", "\(min(grpcConnections, concurrency))"))
        fields.append(("provider", jsonString(options.provider.rawValue)))
        fields.append(("provider_connections", options.target == nil ? "\(options.connections)" : "null"))
        // The old name, kept for scripts that read it (the provider's connections, APNs or FCM).
        fields.append(("apns_connections", options.target == nil ? "\(options.connections)" : "null"))
        fields.append(("setup", jsonString(setup)))
        fields.append(("elapsed_s", number(seconds)))
        fields.append(("rpcs", "\(report.requests)"))
        fields.append(("rpcs_per_s", number(rpcsPerSecond)))
        fields.append(("results", "\(report.tally.results)"))
        fields.append(("delivered", "\(report.tally.delivered)"))
        fields.append(("rejected", "\(report.tally.rejected)"))
        fields.append(("failed", "\(report.tally.failed)"))
        fields.append(("notifications_per_s", number(notificationsPerSecond)))
        fields.append(("delivered_per_s", number(deliveredPerSecond)))
        fields.append((
            "latency_ms",
            "{\"p50\": \(ms(latency.quantile(0.5))), \"p90\": \(ms(latency.quantile(0.9))), \"p99\": \(ms(latency.quantile(0.99))), "
                + "\"p999\": \(ms(latency.quantile(0.999))), \"max\": \(ms(latency.total > 0 ? latency.maxValue : nil)), "
                + "\"mean\": \(latency.mean.map { formatDecimal($0 / 1e6, places: 4) } ?? "null"), \"samples\": \(latency.total)}"
        ))
        let errors = self.errors.map { "\(jsonString($0.0)): \($0.1)" }.joined(separator: ", ")
        fields.append(("errors", "{" + errors + "}"))
        fields.append(("rpc_errors", "\(report.rpcErrors.values.reduce(0, +))"))
        fields.append(("skipped_sends", "\(report.skippedSends)"))
        fields.append(("max_schedule_lag_ms", ms(report.maxScheduleLagNanos)))
        if let stall = stallSummary {
            fields.append((
                "stall_probe",
                "{\"p50_us\": \(number(Double(stall.p50) / 1000)), \"p99_us\": \(number(Double(stall.p99) / 1000)), "
                    + "\"max_us\": \(number(Double(stall.max) / 1000)), \"slow_fraction\": \(formatDecimal(stall.slowFraction, places: 5))}"))
        } else {
            fields.append(("stall_probe", "null"))
        }
        if let clean = latencyOutsideStalls {
            fields.append((
                "latency_outside_stalls_ms",
                "{\"p50\": \(ms(clean.quantile(0.5))), \"p90\": \(ms(clean.quantile(0.9))), \"p99\": \(ms(clean.quantile(0.99))), "
                    + "\"p999\": \(ms(clean.quantile(0.999))), \"samples\": \(clean.total), \"in_stalls\": \(rpcsInStalls)}"))
        } else {
            fields.append(("latency_outside_stalls_ms", "null"))
        }
        if let provider = providerLatency, let mean = provider.mean {
            func ms(_ seconds: Double?) -> String { seconds.map { formatDecimal($0 * 1000, places: 4) } ?? "null" }
            fields.append((
                "provider_request_ms",
                "{\"mean\": \(ms(mean)), \"p50\": \(ms(provider.quantile(0.5))), \"p90\": \(ms(provider.quantile(0.9))), "
                    + "\"p99\": \(ms(provider.quantile(0.99))), \"requests\": \(Int(provider.count))}"))
        } else {
            fields.append(("provider_request_ms", "null"))
        }
        fields.append(("unfinished", "\(report.unfinished)"))
        fields.append(("drain_timed_out", outcome.drainTimedOut ? "true" : "false"))
        fields.append((
            "gateway",
            "{\"rss_idle_kib\": \(int(rssIdleKiB)), \"rss_after_warmup_kib\": \(int(rssAfterWarmupKiB)), "
                + "\"rss_end_kib\": \(int(rssEndKiB)), \"rss_peak_kib\": \(int(rssPeakKiB)), "
                + "\"cpu_percent\": \(number(gatewayCPU)), \"threads\": \(int(gatewayThreads)), "
                + "\"exit_status\": \(gatewayExit.map { "\($0)" } ?? "null")}"
        ))
        fields.append(("mock", "{\"cpu_percent\": \(number(mockCPU)), \"requests\": \(int(mockRequests))}"))
        fields.append(("client_cpu_percent", number(clientCPU)))
        return "{" + fields.map { "\(jsonString($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }
}
