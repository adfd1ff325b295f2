import PushMetrics
import PushProto
import Testing

@testable import PushBench

/// The table and the JSON for known runs, to the character: scripts/bench/run_bench.py and the
/// interop suite read both.
@Suite("Bench table and JSON")
struct BenchRenderingTests {
    static let setup =
        "gateway (child, pid 42, 1 APNs connection(s)) → mock-apns (child, pid 43) https://127.0.0.1:1234"

    /// A 2-second send run: 100 RPCs of 10 tokens answered (1,000 results: 990 delivered, 7
    /// rejected, 3 failed), 2 RPCs UNAVAILABLE; 90 RPCs took 1.998847 ms and 10 took 7.995391 ms
    /// (bucket edges, so the quantiles are exact); 1,000 provider requests, half under 1 ms.
    static func sendRun() -> BenchResult {
        var options = BenchOptions()
        options.tokensPerSend = 10
        options.duration = 2
        var report = BenchConnectionReport()
        for _ in 0..<90 { report.latency.record(1_998_847) }
        for _ in 0..<10 { report.latency.record(7_995_391) }
        report.requests = 100
        report.tally.results = 1000
        report.tally.delivered = 990
        report.tally.rejected = 7
        report.tally.failed = 3
        report.tally.reasons = ["REJECTED BadDeviceToken": 7, "FAILED (no reason)": 3]
        report.rpcErrors = ["UNAVAILABLE": 2]
        let outcome = BenchDriver.Outcome(report: report, elapsedNanos: 2_000_000_000, drainTimedOut: false)
        var result = BenchResult(options: options, concurrency: 4, grpcConnections: 1, outcome: outcome)
        result.setup = setup
        result.rssIdleKiB = 10240
        result.rssAfterWarmupKiB = 20480
        result.rssEndKiB = 30720
        result.rssPeakKiB = 40960
        result.gatewayThreads = 5
        result.gatewayCPU = 150.4
        result.mockCPU = 80.6
        result.clientCPU = 20.2
        result.mockRequests = 1004
        result.gatewayExit = 0
        result.providerLatency = HistogramReading(
            upperBounds: [0.001, 0.005], cumulative: [500, 1000, 1000], sum: 1.5)
        return result
    }

    @Test("the table of a send run")
    func sendTable() {
        let rule = String(repeating: "-", count: 24) + "+" + String(repeating: "-", count: 60)
        let expected = """
            pushgate bench: provider=apns mode=send tokens/send=10 concurrency=4 grpc_connections=1 duration=2.0s
            \(Self.setup)
            \(rule)
            notifications/s         | 500  (1,000 results, 990 delivered, in 2.00 s)
            RPC/s                   | 50.0  (100 RPCs answered OK)
            RPC latency (ms)        | p50 1.999  p90 1.999  p99 7.995  p999 7.995  max 7.995
            provider requests (ms)  | mean 1.500  p50 ~1.000  p90 ~4.200  p99 ~4.920  (gateway histogram, 1,000 requests)
            errors                  | 7  result REJECTED BadDeviceToken
                                    | 3  result FAILED (no reason)
                                    | 2  RPC UNAVAILABLE
            gateway RSS             | idle 10.0 MiB  after warm-up 20.0 MiB  after run 30.0 MiB  peak 40.0 MiB
            gateway CPU             | 150% of one core
            mock-apns CPU           | 81% of one core
            bench client CPU        | 20% of one core
            mock-apns requests      | 1,004 (incl. warm-up)
            \(rule)
            """
        #expect(Self.sendRun().table() == expected)
    }

    @Test("the JSON of a send run")
    func sendJSON() {
        let expected =
            #"{"mode": "send", "tokens_per_send": 10, "concurrency": 4, "pipeline": null, "rate": null, "#
            + #""grpc_connections": 1, "provider": "apns", "provider_connections": 1, "apns_connections": 1, "#
            + #""setup": "\#(Self.setup)", "elapsed_s": 2.000, "rpcs": 100, "rpcs_per_s": 50.000, "#
            + #""results": 1000, "delivered": 990, "rejected": 7, "failed": 3, "notifications_per_s": 500.000, "#
            + #""delivered_per_s": 495.000, "#
            + #""latency_ms": {"p50": 1.9988, "p90": 1.9988, "p99": 7.9954, "p999": 7.9954, "max": 7.9954, "#
            + #""mean": 2.5985, "samples": 100}, "#
            + #""errors": {"result REJECTED BadDeviceToken": 7, "result FAILED (no reason)": 3, "RPC UNAVAILABLE": 2}, "#
            + #""rpc_errors": 2, "skipped_sends": 0, "max_schedule_lag_ms": 0.0000, "stall_probe": null, "#
            + #""latency_outside_stalls_ms": null, "#
            + #""provider_request_ms": {"mean": 1.5000, "p50": 1.0000, "p90": 4.2000, "p99": 4.9200, "requests": 1000}, "#
            + #""unfinished": 0, "drain_timed_out": false, "#
            + #""gateway": {"rss_idle_kib": 10240, "rss_after_warmup_kib": 20480, "rss_end_kib": 30720, "#
            + #""rss_peak_kib": 40960, "cpu_percent": 150.400, "threads": 5, "exit_status": 0}, "#
            + #""mock": {"cpu_percent": 80.600, "requests": 1004}, "client_cpu_percent": 20.200}"#
        #expect(Self.sendRun().json() == expected)
    }

    /// A --rate run against a --target gateway that measured nothing: no RPCs, no readings.
    static func emptyTargetRun() -> BenchResult {
        var options = BenchOptions()
        options.target = ("127.0.0.1", 50051)
        options.rate = 200
        options.count = 50
        let outcome = BenchDriver.Outcome(report: BenchConnectionReport(), elapsedNanos: 0, drainTimedOut: true)
        var result = BenchResult(options: options, concurrency: 1000, grpcConnections: 8, outcome: outcome)
        result.setup = "target 127.0.0.1:50051"
        return result
    }

    @Test("the table of a run that measured nothing: dashes, no resource rows, the drain note")
    func emptyTable() {
        let rule = String(repeating: "-", count: 18) + "+" + String(repeating: "-", count: 60)
        let expected = """
            pushgate bench: provider=apns mode=send tokens/send=1000 rate=200/s (max in flight 1000) grpc_connections=8 count=50
            target 127.0.0.1:50051
            \(rule)
            notifications/s   | 0  (0 results, 0 delivered, in 0.00 s)
            RPC/s             | 0.0  (0 RPCs answered OK)
            RPC latency (ms)  | p50 -  p90 -  p99 -  p999 -  max -
            errors            | none
            rate schedule     | max lag 0.000 ms, sends skipped (in-flight cap) 0
            note              | the drain limit passed with calls in flight
            \(rule)
            """
        #expect(Self.emptyTargetRun().table() == expected)
    }

    @Test("the JSON of a run that measured nothing: nulls where nothing was read")
    func emptyJSON() {
        let expected =
            #"{"mode": "send", "tokens_per_send": 1000, "concurrency": 1000, "pipeline": null, "rate": 200.000, "#
            + #""grpc_connections": 8, "provider": "apns", "provider_connections": null, "apns_connections": null, "#
            + #""setup": "target 127.0.0.1:50051", "elapsed_s": 0.000, "rpcs": 0, "rpcs_per_s": 0.000, "#
            + #""results": 0, "delivered": 0, "rejected": 0, "failed": 0, "notifications_per_s": 0.000, "#
            + #""delivered_per_s": 0.000, "#
            + #""latency_ms": {"p50": null, "p90": null, "p99": null, "p999": null, "max": null, "mean": null, "samples": 0}, "#
            + #""errors": {}, "rpc_errors": 0, "skipped_sends": 0, "max_schedule_lag_ms": 0.0000, "stall_probe": null, "#
            + #""latency_outside_stalls_ms": null, "provider_request_ms": null, "unfinished": 0, "drain_timed_out": true, "#
            + #""gateway": {"rss_idle_kib": null, "rss_after_warmup_kib": null, "rss_end_kib": null, "#
            + #""rss_peak_kib": null, "cpu_percent": null, "threads": null, "exit_status": null}, "#
            + #""mock": {"cpu_percent": null, "requests": null}, "client_cpu_percent": null}"#
        #expect(Self.emptyTargetRun().json() == expected)
    }

    /// A --rate run with the stall probe: 40 pieces of 20 µs (reported as their bucket's edge,
    /// 20.479 µs), 2 of 200 µs (over 5× the median); of 50 RPCs, 45 met no stall (1.998847 ms each)
    /// and 3 did; the schedule lagged 1.5 ms.
    static func rateRun() -> BenchResult {
        var options = BenchOptions()
        options.rate = 100
        options.tokensPerSend = 1
        var report = BenchConnectionReport()
        for _ in 0..<50 { report.latency.record(1_998_847) }
        report.requests = 50
        report.tally.results = 50
        report.tally.delivered = 50
        report.maxScheduleLagNanos = 1_500_000
        report.skippedSends = 3
        let outcome = BenchDriver.Outcome(report: report, elapsedNanos: 500_000_000, drainTimedOut: false)
        var result = BenchResult(options: options, concurrency: 1000, grpcConnections: 1, outcome: outcome)
        result.setup = setup
        var probe = LatencyHistogram()
        for _ in 0..<40 { probe.record(20_000) }
        for _ in 0..<2 { probe.record(200_000) }
        result.stallProbe = probe
        var clean = LatencyHistogram()
        for _ in 0..<45 { clean.record(1_998_847) }
        result.latencyOutsideStalls = clean
        result.rpcsInStalls = 3
        return result
    }

    @Test("a --rate run's table: latency outside stalls, the schedule and the stall probe")
    func rateTable() {
        let rows = Self.rateRun().table().split(separator: "\n").map(String.init)
        #expect(
            rows[0]
                == "pushgate bench: provider=apns mode=send tokens/send=1 rate=100/s (max in flight 1000) grpc_connections=1"
        )
        #expect(
            rows.contains(
                "  outside stalls (ms)  | p50 1.999  p90 1.999  p99 1.999  p999 1.999  (45 RPCs; 3 were in flight while the machine stalled; of the first 48 RPCs)"
            ))
        #expect(rows.contains("rate schedule          | max lag 1.500 ms, sends skipped (in-flight cap) 3"))
        #expect(
            rows.contains(
                "machine stall probe    | fixed work: p50 20 µs  p99 200 µs  max 200 µs; over 5× the median 4.76% of the time"
            ))
        #expect(rows.contains("notifications/s        | 100  (50 results, 50 delivered, in 0.50 s)"))
        #expect(!rows.contains { $0.hasPrefix("gateway RSS") })
    }

    @Test("a --rate run's JSON: stall probe and latency outside stalls")
    func rateJSON() {
        let json = Self.rateRun().json()
        #expect(json.contains(#""rate": 100.000, "grpc_connections": 1,"#))
        #expect(json.contains(#""skipped_sends": 3, "max_schedule_lag_ms": 1.5000, "#))
        #expect(
            json.contains(
                #""stall_probe": {"p50_us": 20.479, "p99_us": 200.000, "max_us": 200.000, "slow_fraction": 0.04762}, "#)
        )
        #expect(
            json.contains(
                #""latency_outside_stalls_ms": {"p50": 1.9988, "p90": 1.9988, "p99": 1.9988, "p999": 1.9988, "samples": 45, "in_stalls": 3}, "#
            ))
    }

    @Test("a stream run says streams and pipeline; at most 12 error reasons, then how many more")
    func streamAndManyErrors() {
        var options = BenchOptions()
        options.mode = .stream
        options.pipeline = 8
        var report = BenchConnectionReport()
        for i in 0..<15 { report.rpcErrors["E\(i < 10 ? "0" : "")\(i)"] = 1 }
        let outcome = BenchDriver.Outcome(report: report, elapsedNanos: 1_000_000_000, drainTimedOut: false)
        let run = BenchResult(options: options, concurrency: 4, grpcConnections: 2, outcome: outcome)
        let rows = run.table().split(separator: "\n").map(String.init)
        #expect(
            rows[0]
                == "pushgate bench: provider=apns mode=stream tokens/send=1000 streams=4 pipeline=8 grpc_connections=2")
        let errorRows = rows.filter { $0.contains("| 1  RPC E") }
        #expect(errorRows.count == 12)
        #expect(errorRows.first?.hasPrefix("errors ") == true && errorRows.first?.hasSuffix("RPC E00") == true)
        #expect(errorRows.last?.hasSuffix("RPC E11") == true)
        #expect(rows.contains { $0.hasSuffix("| … 3 more reasons") })
        #expect(run.json().contains(#""pipeline": 8,"#))
        #expect(run.json().contains(#""rpc_errors": 15,"#))
    }

    @Test("a Publish fan-out's lines and JSON")
    func publish() {
        var message = PushgateV1.Message()
        message.state = .completed
        message.total = 2000
        message.delivered = 1990
        message.rejected = 6
        message.failed = 3
        message.skipped = 1
        let fanOut = BenchPublish.FanOut(message: message, publishMs: 12.3456, seconds: 0.5)
        #expect(fanOut.subscribersPerSecond == 3980)
        #expect(
            fanOut.table(subscribers: 2000, setup: "target 127.0.0.1:50051") == """
                Publish fan-out: 2000 subscribers, target 127.0.0.1:50051
                  Publish answered (committed)   12.35 ms
                  fan-out done in                0.500 s
                  subscribers/s                  3,980
                  state                          MESSAGE_STATE_COMPLETED
                  total / delivered / rejected / failed / skipped
                                                 2000 / 1990 / 6 / 3 / 1
                """)
        #expect(
            fanOut.json(subscribers: 2000) == #"{"mode":"publish","subscribers":2000,"seconds":0.5,"#
                + #""subscribers_per_second":3980,"publish_ms":12.3456,"state":"MESSAGE_STATE_COMPLETED","#
                + #""total":2000,"delivered":1990,"rejected":6,"failed":3,"skipped":1}"#)
        #expect(BenchPublish.FanOut(message: message, publishMs: 1, seconds: 0).subscribersPerSecond == 0)
    }

    @Test("numbers: decimals, thousands, milliseconds")
    func formatting() {
        #expect(formatDecimal(2, places: 0) == "2")
        #expect(formatDecimal(2, places: 3) == "2.000")
        #expect(formatDecimal(1.23456, places: 2) == "1.23")
        #expect(formatDecimal(-0.5, places: 1) == "-0.5")
        #expect(formatDecimal(99.96, places: 1) == "100.0")
        #expect(formatDecimal(.infinity, places: 2) == "inf")
        #expect(formatCount(0) == "0")
        #expect(formatCount(999) == "999")
        #expect(formatCount(1000) == "1,000")
        #expect(formatCount(1_234_567) == "1,234,567")
        #expect(formatCount(-1_234) == "-1,234")
        #expect(formatMillis(nil) == "-")
        #expect(formatMillis(1_234_567) == "1.235")
        #expect(formatMillis(12_345_678) == "12.35")
        #expect(formatMillis(123_456_789) == "123.5")
    }

    @Test("JSON strings escape quotes, backslashes and control characters")
    func jsonStrings() {
        #expect(jsonString("plain → ü") == #""plain → ü""#)
        #expect(jsonString("a\"b\\c\nd\re\tf\u{01}") == #""a\"b\\c\nd\re\tf\u0001""#)
    }
}
