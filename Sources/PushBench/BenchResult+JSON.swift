import PushMetrics

/// The one JSON object `pushgate bench --json` prints (scripts/bench/run_bench.py reads it): the
/// fields in a fixed order, null for what was not measured.
extension BenchResult {
    /// A field: its key and its value, already JSON.
    typealias Field = (key: String, value: String)

    func json() -> String {
        let fields =
            workloadFields() + throughputFields() + latencyFields() + stallAndProviderFields() + resourceFields()
        return "{" + fields.map { "\(jsonString($0.key)): \($0.value)" }.joined(separator: ", ") + "}"
    }

    /// `{"a": 1, "b": null}` from fields whose values are already JSON.
    private static func object(_ fields: [Field]) -> String {
        "{" + fields.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "}"
    }

    /// 3 decimals, or null.
    private static func number(_ value: Double?) -> String { value.map { formatDecimal($0, places: 3) } ?? "null" }
    private static func int(_ value: Int?) -> String { value.map { "\($0)" } ?? "null" }
    /// Nanoseconds as milliseconds with 4 decimals, or null.
    private static func ms(_ nanos: UInt64?) -> String {
        nanos.map { formatDecimal(Double($0) / 1e6, places: 4) } ?? "null"
    }

    /// What was asked for, and the setup that ran it.
    private func workloadFields() -> [Field] {
        let providerConnections = options.target == nil ? "\(options.connections)" : "null"
        return [
            ("mode", jsonString(options.mode.rawValue)),
            ("tokens_per_send", options.mode == .publish ? "0" : "\(options.tokensPerSend)"),
            ("concurrency", "\(concurrency)"),
            ("pipeline", options.mode == .stream ? "\(options.pipeline)" : "null"),
            ("rate", Self.number(options.rate)),
            ("grpc_connections", "\(min(grpcConnections, concurrency))"),
            ("provider", jsonString(options.provider.rawValue)),
            ("provider_connections", providerConnections),
            // The old name, kept for scripts that read it (the provider's connections, APNs or FCM).
            ("apns_connections", providerConnections),
            ("setup", jsonString(setup)),
        ]
    }

    private func throughputFields() -> [Field] {
        [
            ("elapsed_s", Self.number(seconds)),
            ("rpcs", "\(report.requests)"),
            ("rpcs_per_s", Self.number(rpcsPerSecond)),
            ("results", "\(report.tally.results)"),
            ("delivered", "\(report.tally.delivered)"),
            ("rejected", "\(report.tally.rejected)"),
            ("failed", "\(report.tally.failed)"),
            ("notifications_per_s", Self.number(notificationsPerSecond)),
            ("delivered_per_s", Self.number(deliveredPerSecond)),
        ]
    }

    /// The RPCs' latency, the errors, and (with --rate) the schedule.
    private func latencyFields() -> [Field] {
        let latency = report.latency
        let latencyObject = Self.object([
            ("p50", Self.ms(latency.quantile(0.5))), ("p90", Self.ms(latency.quantile(0.9))),
            ("p99", Self.ms(latency.quantile(0.99))), ("p999", Self.ms(latency.quantile(0.999))),
            ("max", Self.ms(latency.total > 0 ? latency.maxValue : nil)),
            ("mean", latency.mean.map { formatDecimal($0 / 1e6, places: 4) } ?? "null"),
            ("samples", "\(latency.total)"),
        ])
        let errors = self.errors.map { "\(jsonString($0.0)): \($0.1)" }.joined(separator: ", ")
        return [
            ("latency_ms", latencyObject),
            ("errors", "{" + errors + "}"),
            ("rpc_errors", "\(report.rpcErrors.values.reduce(0, +))"),
            ("skipped_sends", "\(report.skippedSends)"),
            ("max_schedule_lag_ms", Self.ms(report.maxScheduleLagNanos)),
        ]
    }

    /// The stall probe and the latency outside its stalls (--rate), the gateway's provider requests.
    private func stallAndProviderFields() -> [Field] {
        var stallProbe = "null"
        if let stall = stallSummary {
            stallProbe = Self.object([
                ("p50_us", Self.number(Double(stall.p50) / 1000)), ("p99_us", Self.number(Double(stall.p99) / 1000)),
                ("max_us", Self.number(Double(stall.max) / 1000)),
                ("slow_fraction", formatDecimal(stall.slowFraction, places: 5)),
            ])
        }
        var outsideStalls = "null"
        if let clean = latencyOutsideStalls {
            outsideStalls = Self.object([
                ("p50", Self.ms(clean.quantile(0.5))), ("p90", Self.ms(clean.quantile(0.9))),
                ("p99", Self.ms(clean.quantile(0.99))), ("p999", Self.ms(clean.quantile(0.999))),
                ("samples", "\(clean.total)"), ("in_stalls", "\(rpcsInStalls)"),
            ])
        }
        var provider = "null"
        if let reading = providerLatency, let mean = reading.mean {
            func ms(_ seconds: Double?) -> String { seconds.map { formatDecimal($0 * 1000, places: 4) } ?? "null" }
            provider = Self.object([
                ("mean", ms(mean)), ("p50", ms(reading.quantile(0.5))), ("p90", ms(reading.quantile(0.9))),
                ("p99", ms(reading.quantile(0.99))), ("requests", "\(Int(reading.count))"),
            ])
        }
        return [
            ("stall_probe", stallProbe), ("latency_outside_stalls_ms", outsideStalls),
            ("provider_request_ms", provider),
        ]
    }

    /// How the run ended, and the processes' memory and CPU.
    private func resourceFields() -> [Field] {
        let gateway = Self.object([
            ("rss_idle_kib", Self.int(rssIdleKiB)), ("rss_after_warmup_kib", Self.int(rssAfterWarmupKiB)),
            ("rss_end_kib", Self.int(rssEndKiB)), ("rss_peak_kib", Self.int(rssPeakKiB)),
            ("cpu_percent", Self.number(gatewayCPU)), ("threads", Self.int(gatewayThreads)),
            ("exit_status", gatewayExit.map { "\($0)" } ?? "null"),
        ])
        return [
            ("unfinished", "\(report.unfinished)"),
            ("drain_timed_out", outcome.drainTimedOut ? "true" : "false"),
            ("gateway", gateway),
            ("mock", Self.object([("cpu_percent", Self.number(mockCPU)), ("requests", Self.int(mockRequests))])),
            ("client_cpu_percent", Self.number(clientCPU)),
        ]
    }
}
