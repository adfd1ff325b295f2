import PushPosix
import PushProto
import Testing

@testable import PushBench

@Suite("Bench statistics")
struct BenchStatisticsTests {
    private func result(elapsedNanos: UInt64, report: BenchConnectionReport) -> BenchResult {
        BenchResult(
            options: BenchOptions(), concurrency: 4, grpcConnections: 1,
            outcome: BenchDriver.Outcome(report: report, elapsedNanos: elapsedNanos, drainTimedOut: false))
    }

    @Test("rates are counts over the measured seconds")
    func rates() {
        var report = BenchConnectionReport()
        report.requests = 3
        report.tally.results = 300
        report.tally.delivered = 297
        let run = result(elapsedNanos: 1_500_000_000, report: report)
        #expect(run.seconds == 1.5)
        #expect(run.notificationsPerSecond == 200)
        #expect(run.deliveredPerSecond == 198)
        #expect(run.rpcsPerSecond == 2)
    }

    @Test("a run that took no time has rates of 0, not infinity")
    func zeroElapsed() {
        var report = BenchConnectionReport()
        report.requests = 3
        report.tally.results = 300
        let run = result(elapsedNanos: 0, report: report)
        #expect(run.notificationsPerSecond == 0)
        #expect(run.deliveredPerSecond == 0)
        #expect(run.rpcsPerSecond == 0)
    }

    @Test("errors: RPC statuses, result reasons and unfinished calls, most frequent first, then by name")
    func errors() {
        var report = BenchConnectionReport()
        report.rpcErrors = ["UNAVAILABLE (connection closed)": 2, "DEADLINE_EXCEEDED": 3]
        report.tally.reasons = ["REJECTED BadDeviceToken": 7, "FAILED (no reason)": 2]
        report.unfinished = 1
        let errors = result(elapsedNanos: 1, report: report).errors
        #expect(
            errors.map(\.0) == [
                "result REJECTED BadDeviceToken", "RPC DEADLINE_EXCEEDED", "RPC UNAVAILABLE (connection closed)",
                "result FAILED (no reason)", "unfinished at the drain limit",
            ])
        #expect(errors.map(\.1) == [7, 3, 2, 2, 1])
    }

    @Test("connection reports merge: sums, the larger lag, both histograms")
    func reportMerge() {
        var a = BenchConnectionReport()
        a.requests = 2
        a.rpcErrors = ["X": 1]
        a.maxScheduleLagNanos = 5
        a.skippedSends = 1
        a.latency.record(10)
        a.tally.results = 4
        var b = BenchConnectionReport()
        b.requests = 3
        b.rpcErrors = ["X": 2, "Y": 1]
        b.maxScheduleLagNanos = 3
        b.unfinished = 2
        b.latency.record(20)
        b.tally.results = 6
        b.samples = [RPCSample(sentAt: 1, latency: 20)]
        a.merge(b)
        #expect(a.requests == 5)
        #expect(a.rpcErrors == ["X": 3, "Y": 1])
        #expect(a.maxScheduleLagNanos == 5)
        #expect(a.skippedSends == 1)
        #expect(a.unfinished == 2)
        #expect(a.latency.total == 2 && a.latency.maxValue == 20)
        #expect(a.tally.results == 10)
        #expect(a.samples.count == 1)
    }

    @Test("ResultTally counts a SendResponse's results by status and reason from the wire bytes")
    func tally() {
        var response = PushgateV1.SendResponse()
        func add(_ status: PushgateV1.Status, _ reason: String, count: Int) {
            var result = PushgateV1.Result()
            result.token = "b0"
            result.status = status
            result.reason = reason
            result.httpStatus = 400
            result.attempts = 1
            response.results += Array(repeating: result, count: count)
        }
        add(.delivered, "", count: 5)
        add(.rejected, "BadDeviceToken", count: 2)
        add(.failed, "", count: 1)
        add(PushgateV1.Status(rawValue: 9), "Odd", count: 1)
        var tally = ResultTally()
        let scanned = tally.scanSendResponse(response.serializedBytes())
        #expect(scanned)
        #expect(tally.results == 9)
        #expect(tally.delivered == 5)
        #expect(tally.rejected == 2)
        #expect(tally.failed == 1)
        #expect(tally.other == 1)
        #expect(tally.errors == 4)
        #expect(tally.reasons == ["REJECTED BadDeviceToken": 2, "FAILED (no reason)": 1, "STATUS_9 Odd": 1])

        var merged = ResultTally()
        merged.merge(tally)
        merged.merge(tally)
        #expect(merged.results == 18 && merged.delivered == 10 && merged.reasons["REJECTED BadDeviceToken"] == 4)
    }

    @Test(
        "ResultTally refuses bytes that are not a SendResponse",
        arguments: [[UInt8(0x0A), 0x05, 0x18], [0x0F], [0x0A, 0x80]])
    func tallyRefusesGarbage(bytes: [UInt8]) {
        var tally = ResultTally()
        let scanned = tally.scanSendResponse(bytes)
        #expect(!scanned)
    }

    @Test("an empty SendResponse has no results")
    func tallyEmpty() {
        var tally = ResultTally()
        let scanned = tally.scanSendResponse([])
        #expect(scanned)
        #expect(tally.results == 0)
    }

    @Test("stall windows: slow pieces, merged when close, and the RPCs that met them")
    func stallWindows() {
        let pieces = [
            ProbePiece(begin: 0, duration: 20_000),  // fast: no stall
            ProbePiece(begin: 10_000_000, duration: 500_000),  // stall 10.0-10.5 ms
            ProbePiece(begin: 11_000_000, duration: 300_000),  // within 2 ms: merged, to 11.3 ms
            ProbePiece(begin: 20_000_000, duration: 400_000),  // a second stall 20.0-20.4 ms
        ]
        let windows = StallWindows(pieces: pieces, slowerThan: 100_000)
        #expect(windows.spans.map(\.begin) == [10_000_000, 20_000_000])
        #expect(windows.spans.map(\.end) == [11_300_000, 20_400_000])
        #expect(!windows.overlaps(0, 10_000_000))
        #expect(windows.overlaps(9_000_000, 10_000_001))
        #expect(windows.overlaps(11_299_999, 12_000_000))
        #expect(!windows.overlaps(11_300_000, 19_999_999))
        #expect(windows.overlaps(20_100_000, 20_200_000))
        #expect(!windows.overlaps(20_400_000, 30_000_000))

        let samples = [
            RPCSample(sentAt: 1_000_000, latency: 1_000),  // clear
            RPCSample(sentAt: 9_500_000, latency: 1_000_000),  // runs into the first stall
            RPCSample(sentAt: 15_000_000, latency: 2_000),  // clear
            RPCSample(sentAt: 20_300_000, latency: 50),  // inside the second
        ]
        let split = windows.outside(samples)
        #expect(split.inStalls == 2)
        #expect(split.latency.total == 2)
        #expect(split.latency.maxValue == 2_000)
    }

    @Test("the request: one notification of tokens-per-send distinct tokens, app bench unless --target")
    func requestMessage() throws {
        var options = BenchOptions()
        options.tokensPerSend = 3
        let request = try PushgateV1.SendRequest(serializedBytes: Bench.requestMessage(options))
        #expect(request.notifications.count == 1)
        let notification = request.notifications[0]
        #expect(notification.app == "bench")
        #expect(notification.tokens == [BenchTokens.apns(0), BenchTokens.apns(1), BenchTokens.apns(2)])
        #expect(notification.alert?.title == "Bench")
        #expect(notification.alert?.body == "Hello from pushgate bench")
        #expect(notification.dataJSON == "")

        options.provider = .fcm
        options.target = ("127.0.0.1", 50051)
        let fcm = try PushgateV1.SendRequest(serializedBytes: Bench.requestMessage(options)).notifications[0]
        #expect(fcm.app == "")
        #expect(fcm.dataJSON == #"{"bench":"1"}"#)
        #expect(fcm.tokens == (0..<3).map(BenchTokens.fcm))
    }

    @Test("tokens have each provider's shape and are distinct")
    func tokens() {
        #expect(BenchTokens.apns(0) == "b" + String(repeating: "0", count: 63))
        #expect(BenchTokens.apns(0xbb) == "b" + String(repeating: "0", count: 61) + "bb")
        #expect(BenchTokens.apns(0xb) != BenchTokens.apns(0xbb))
        let count = 2_000
        for (shape, length, prefix) in [
            (BenchProvider.apns, 64, "b"), (.fcm, 152, "bench-"), (.adm, 700, "amzn1.adm-registration.v3.bench-"),
        ] {
            let tokens = (0..<count).map(shape.token)
            #expect(Set(tokens).count == count)
            #expect(tokens.allSatisfy { $0.utf8.count == length && $0.hasPrefix(prefix) })
        }
        #expect(BenchTokens.fcm(255).hasPrefix("bench-ff:APA91b"))
        #expect(BenchTokens.adm(255).hasPrefix("amzn1.adm-registration.v3.bench-ff."))
        #expect(BenchTokens.apns(Int(Int32.max)).allSatisfy { $0.isHexDigit })
    }

    @Test("the mock's final stats line: the last one's key=value")
    func mockFinalStats() {
        let log = """
            mock-apns listening on 127.0.0.1:1234
            mock-apns: final stats requests=10 [200=10]
            mock-apns: final stats requests=1004 [200=1000 410=4] streams=7
            """
        #expect(mockFinalStat(log, key: "requests") == 1004)
        #expect(mockFinalStat(log, key: "streams") == 7)
        #expect(mockFinalStat(log, key: "missing") == nil)
        #expect(mockFinalStat("no stats here", key: "requests") == nil)
    }

    @Test("String.after: the text after the first occurrence of the marker")
    func after() {
        #expect("msg=listening address=127.0.0.1:5005 x".after("address=127.0.0.1:") == "5005 x")
        #expect("a:b:c".after(":") == "b:c")
        #expect("abc".after("abcd") == nil)
        #expect("abc".after("") == nil)
        #expect("héllo wörld".after("ö") == "rld")
    }

    @Test("the plan: concurrency, connections and request budget from the flags")
    func plan() throws {
        let closed = BenchPlan(try #require(try BenchOptions.parse([])))
        #expect(closed.concurrency == 4)
        #expect(closed.tokensPerRequest == 1000)
        #expect(closed.grpcConnections == 1 && closed.clientConnections == 1)
        #expect(closed.measured.maxRequests == Int.max)
        #expect(closed.measured.rate == nil)
        #expect(closed.duration == .seconds(10))
        #expect(closed.drainLimit == .seconds(35))
        #expect(closed.measured.timeout == .seconds(30))
        #expect(closed.warmup?.maxRequests == 4 && closed.warmup?.concurrency == 4 && closed.warmup?.rate == nil)

        let rate = BenchPlan(
            try #require(
                try BenchOptions.parse([
                    "--rate", "500", "--count", "2500", "--tokens-per-send", "1000", "--warmup", "2", "--timeout",
                    "2.5",
                ])))
        #expect(rate.concurrency == 1000)
        #expect(rate.grpcConnections == 8)
        #expect(rate.measured.maxRequests == 3)  // 2,500 tokens in requests of 1,000
        #expect(rate.measured.rate == 500)
        #expect(rate.duration == .seconds(600))
        #expect(rate.drainLimit == .seconds(8))
        #expect(rate.measured.timeout == .milliseconds(2500))
        #expect(rate.warmup?.concurrency == 2)

        let stream = BenchPlan(
            try #require(
                try BenchOptions.parse([
                    "--mode", "stream", "--concurrency", "65", "--duration", "1.5", "--warmup", "0",
                ])))
        #expect(stream.grpcConnections == 2)
        #expect(stream.warmup == nil)
        #expect(stream.duration == .milliseconds(1500))

        let capped = BenchPlan(
            try #require(try BenchOptions.parse(["--concurrency", "3", "--grpc-connections", "10"])))
        #expect(capped.grpcConnections == 10 && capped.clientConnections == 3)
        #expect(BenchPlan.requests(for: 5, tokensPerRequest: 0) == 5)
        #expect(BenchPlan.connections(for: 128, mode: .send) == 1 && BenchPlan.connections(for: 129, mode: .send) == 2)
    }

    @Test("CPU is ticks over the run's seconds, in percent of one core")
    func cpuPercent() {
        let ticks = Int(ProcessSample.ticksPerSecond)
        let start = ProcessSample(rssKiB: 0, peakRSSKiB: 0, cpuTicks: 10, threads: 1)
        let end = ProcessSample(rssKiB: 0, peakRSSKiB: 0, cpuTicks: 10 + 3 * ticks, threads: 1)
        #expect(ProcessSample.cpuPercent(from: start, to: end, over: 2) == 150)
        #expect(ProcessSample.cpuPercent(from: nil, to: end, over: 2) == nil)
        #expect(ProcessSample.cpuPercent(from: start, to: end, over: 0) == nil)
    }

    @Test("this process's /proc readings are there and plausible")
    func readSelf() throws {
        let sample = try #require(ProcessSample.readSelf())
        #expect(sample.rssKiB > 0 && sample.peakRSSKiB >= sample.rssKiB)
        #expect(sample.threads >= 1)
    }

    @Test("the progress line: rates since the previous line, totals, the gateway's RSS")
    func progressLine() {
        var progress = BenchProgress(tokensPerRequest: 100, gatewayPID: nil)
        #expect(
            progress.line(
                requests: 50, results: 5_000, delivered: 4_990, failedRPCs: 1, elapsed: 1_000_000_000,
                gatewayRSSKiB: 20_480)
                == "bench: 1s  notifications/s 5,000  RPC/s 50  total 5,000 delivered 4,990  failed RPCs 1  gateway RSS 20.0 MiB"
        )
        #expect(
            progress.line(
                requests: 150, results: 15_000, delivered: 15_000, failedRPCs: 1, elapsed: 3_000_000_000,
                gatewayRSSKiB: nil)
                == "bench: 3s  notifications/s 5,000  RPC/s 50  total 15,000 delivered 15,000  failed RPCs 1")
        var publish = BenchProgress(tokensPerRequest: 0, gatewayPID: nil)
        #expect(
            publish.line(
                requests: 2, results: 0, delivered: 0, failedRPCs: 0, elapsed: 1_000_000_000, gatewayRSSKiB: nil)
                == "bench: 1s  RPC/s 2  total 0 delivered 0  failed RPCs 0")
    }
}
