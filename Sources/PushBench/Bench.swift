#if canImport(Glibc)
import Glibc
#endif
import PushCommandLine
import PushMetrics
import PushProto
import Synchronization

/// `pushgate bench`: drives a gateway through its real gRPC API and reports throughput, latency,
/// errors and the gateway's memory and CPU. With no `--target` it starts `pushgate mock-apns` (or,
/// with `--provider fcm` or `adm`, `pushgate mock-fcm` or `mock-adm`) and a gateway configured to it
/// (generated .p8 key, service account or client credentials, loopback only) as child processes.
public enum Bench {
    /// Sets up the gateway (or finds the one given), measures, prints the table or the JSON and
    /// stops what it started. Exit status: 0 when requests completed, 1 when none did, 3 set-up
    /// failed (2, bad usage, is for the caller: ``BenchOptions/parse(_:)`` threw).
    public static func run(_ options: BenchOptions) async -> Int32 {
        var setup = BenchSetup()
        defer { setup.tearDown(keepFiles: options.keepFiles) }
        do {
            try await setup.start(options)
        } catch {
            printError("pushgate bench: \(error)")
            return 3
        }
        if options.mode == .publish { return await BenchPublish.measure(options, &setup) }
        return await measure(options, &setup)
    }

    // MARK: The run

    static func measure(_ options: BenchOptions, _ setup: inout BenchSetup) async -> Int32 {
        let concurrency = options.concurrency ?? (options.rate != nil && options.mode != .stream ? 1000 : 4)
        let tokensPerRequest = options.mode == .publish ? 0 : options.tokensPerSend
        let message = requestMessage(options)
        let grpcConnections: Int
        if let n = options.grpcConnections {
            grpcConnections = n
        } else if options.mode == .stream {
            grpcConnections = max(1, (concurrency + 63) / 64)
        } else {
            grpcConnections = max(1, (concurrency + 127) / 128)
        }
        // Idle: the gateway started, no traffic yet.
        usleep(300_000)
        let idle = setup.gatewayPID.flatMap { ProcessSample.read(pid: $0) }

        let driver: BenchDriver
        do {
            driver = try await BenchDriver.connect(
                host: setup.host, port: setup.port, connections: min(grpcConnections, max(1, concurrency)),
                loops: options.clientLoops)
        } catch {
            printError("pushgate bench: cannot connect to \(setup.host):\(setup.port): \(error)")
            return 3
        }
        defer { driver.close() }

        let timeout = Duration.milliseconds(Int(options.timeout * 1000))
        let drainLimit = Duration.seconds(Int(options.timeout.rounded(.up)) + 5)
        if options.warmup > 0 {
            let warmup = BenchWorkload(
                mode: options.mode, message: message, tokensPerRequest: tokensPerRequest,
                concurrency: min(options.warmup, concurrency), pipeline: options.pipeline, rate: nil,
                maxRequests: options.warmup, timeout: timeout)
            let outcome = await driver.run(warmup, duration: .seconds(30), drainLimit: drainLimit)
            if !options.quiet {
                printError("bench: warm-up: \(outcome.report.requests) of \(options.warmup) RPCs answered"
                    + (outcome.report.rpcErrors.isEmpty ? "" : ", errors: \(outcome.report.rpcErrors)"))
            }
        }
        let afterWarmup = setup.gatewayPID.flatMap { ProcessSample.read(pid: $0) }
        let mockPID = setup.mock?.pid
        let mockBefore = mockPID.flatMap { ProcessSample.read(pid: $0) }
        let selfBefore = ProcessSample.readSelf()
        let providerBefore = setup.metrics.flatMap { ProviderLatency.scrape(host: $0.host, port: $0.port) }

        let maxRequests: Int
        if let count = options.count {
            maxRequests = tokensPerRequest > 0 ? (count + tokensPerRequest - 1) / tokensPerRequest : count
        } else {
            maxRequests = Int.max
        }
        let durationSeconds = options.duration ?? (options.count == nil ? 10 : 600)
        let workload = BenchWorkload(
            mode: options.mode, message: message, tokensPerRequest: tokensPerRequest, concurrency: concurrency,
            pipeline: options.pipeline, rate: options.rate, maxRequests: maxRequests, timeout: timeout)
        let gatewayPID = setup.gatewayPID
        var last = (requests: 0, results: 0, at: UInt64(0))
        let stallProbe = options.rate != nil ? BenchStallProbe() : nil
        stallProbe?.start()
        let outcome = await driver.run(
            workload, duration: .milliseconds(Int(durationSeconds * 1000)), drainLimit: drainLimit
        ) { shared, elapsed in
            guard !options.quiet else { return }
            let requests = shared.completedRequests.load(ordering: .relaxed)
            let results = shared.completedResults.load(ordering: .relaxed)
            let seconds = Double(elapsed - last.at) / 1e9
            var line = "bench: \(formatDecimal(Double(elapsed) / 1e9, places: 0))s"
            if tokensPerRequest > 0 {
                line += "  notifications/s \(formatCount(Int(Double(results - last.results) / seconds)))"
            }
            line += "  RPC/s \(formatCount(Int(Double(requests - last.requests) / seconds)))"
            line += "  total \(formatCount(results)) delivered \(formatCount(shared.deliveredResults.load(ordering: .relaxed)))"
            line += "  failed RPCs \(formatCount(shared.failedRequests.load(ordering: .relaxed)))"
            if let pid = gatewayPID, let sample = ProcessSample.read(pid: pid) {
                line += "  gateway RSS \(formatDecimal(Double(sample.rssKiB) / 1024, places: 1)) MiB"
            }
            printError(line)
            last = (requests, results, elapsed)
        }
        let stalls = stallProbe?.stop()
        let gatewayEnd = gatewayPID.flatMap { ProcessSample.read(pid: $0) }
        let mockEnd = mockPID.flatMap { ProcessSample.read(pid: $0) }
        let selfEnd = ProcessSample.readSelf()
        // After the drain, so every request of the run has been answered and observed.
        let providerEnd = setup.metrics.flatMap { ProviderLatency.scrape(host: $0.host, port: $0.port) }
        // RSS once the run's garbage has had a moment to be returned.
        usleep(500_000)
        let settled = gatewayPID.flatMap { ProcessSample.read(pid: $0) }
        driver.close()
        setup.tearDown(keepFiles: options.keepFiles)

        var result = BenchResult(options: options, concurrency: concurrency, grpcConnections: grpcConnections, outcome: outcome)
        result.setup = setup.description
        result.rssIdleKiB = idle?.rssKiB
        result.rssAfterWarmupKiB = afterWarmup?.rssKiB
        result.rssEndKiB = settled?.rssKiB ?? gatewayEnd?.rssKiB
        result.rssPeakKiB = settled?.peakRSSKiB ?? gatewayEnd?.peakRSSKiB
        result.gatewayThreads = gatewayEnd?.threads
        let seconds = Double(outcome.elapsedNanos) / 1e9
        func cpu(_ a: ProcessSample?, _ b: ProcessSample?) -> Double? {
            guard let a, let b, seconds > 0 else { return nil }
            return Double(b.cpuTicks - a.cpuTicks) / ProcessSample.ticksPerSecond / seconds * 100
        }
        result.gatewayCPU = cpu(afterWarmup, gatewayEnd)
        result.mockCPU = cpu(mockBefore, mockEnd)
        result.clientCPU = cpu(selfBefore, selfEnd)
        result.stallProbe = stalls?.durations
        if let windows = stalls?.stalls, !outcome.report.samples.isEmpty {
            let split = windows.outside(outcome.report.samples)
            result.latencyOutsideStalls = split.latency
            result.rpcsInStalls = split.inStalls
        }
        if let providerBefore, let providerEnd { result.providerLatency = providerEnd.since(providerBefore) }
        result.mockRequests = mockFinalStat(setup.mockFinalLog, key: "requests")
        result.gatewayExit = setup.gatewayExit
        print(options.json ? result.json() : result.table())
        return outcome.report.requests > 0 ? 0 : 1
    }

    /// The request every RPC sends: one notification to `tokens-per-send` distinct tokens; for FCM
    /// with data too.
    static func requestMessage(_ options: BenchOptions) -> [UInt8] {
        if options.mode == .publish {
            var request = PushgateV1.PublishRequest()
            request.topic = "bench"
            request.message = "Hello from pushgate bench"
            return request.serializedBytes()
        }
        var notification = PushgateV1.Notification()
        notification.app = options.target == nil ? "bench" : ""
        var alert = PushgateV1.Alert()
        alert.title = "Bench"
        alert.body = "Hello from pushgate bench"
        notification.alert = alert
        if options.provider != .apns { notification.dataJSON = #"{"bench":"1"}"# }
        notification.tokens = (0..<options.tokensPerSend).map(options.provider.token)
        var request = PushgateV1.SendRequest()
        request.notifications = [notification]
        return request.serializedBytes()
    }
}
