import PushCommandLine
import PushPosix
import PushProto

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate bench`: drives a gateway through its real gRPC API and reports throughput, latency,
/// errors and the gateway's memory and CPU. With no `--target` it starts `pushgate mock-apns` (or,
/// with `--provider fcm` or `adm`, `pushgate mock-fcm` or `mock-adm`) and a gateway configured to it
/// (generated .p8 key, service account or client credentials, loopback only) as child processes.
public enum Bench {
    /// Sets up the gateway (or finds the one given), measures, prints the table or the JSON and
    /// stops what it started. Exit status: 0 when requests completed, 1 when none did, 3 set-up
    /// failed (2, bad usage, is for the caller: ``BenchOptions/parse(_:)`` threw).
    public static func run(_ options: BenchOptions) async -> Int32 {
        if options.mode == .encrypt { return BenchEncryption.measure(options) }
        var setup = BenchSetup()
        defer { setup.tearDown(keepFiles: options.keepFiles) }
        do {
            try await setup.start(options)
        } catch {
            printError("pushgate bench: \(error)")
            return 3
        }
        if options.mode == .publish { return await BenchPublish.measure(options, &setup) }
        if options.client == .h2load { return BenchH2load.measure(options, &setup) }
        return await measure(options, &setup)
    }

    // MARK: The run

    /// A send or stream run: idle reading, warm-up, the measured phase with its readings before and
    /// after, then the gateway and mock stopped (for their exit status and final stats) and the report.
    static func measure(_ options: BenchOptions, _ setup: inout BenchSetup) async -> Int32 {
        let plan = BenchPlan(options, tokens: setup.tokens)
        // Idle: the gateway started, no traffic yet.
        usleep(300_000)
        let idle = setup.gatewayPID.flatMap { ProcessSample.read(pid: $0) }
        let driver: BenchDriver
        do {
            driver = try await BenchDriver.connect(
                host: setup.host, port: setup.port, connections: plan.clientConnections, loops: options.clientLoops)
        } catch {
            printError("pushgate bench: cannot connect to \(setup.host):\(setup.port): \(error)")
            return 3
        }
        defer { driver.close() }
        await warmUp(driver, plan, quiet: options.quiet)
        let readings = BenchReadings.Sources(
            gatewayPID: setup.gatewayPID, mockPID: setup.mock?.pid, metrics: setup.metrics)
        let before = readings.read()
        let (outcome, stalls) = await measuredPhase(driver, plan, quiet: options.quiet, gatewayPID: setup.gatewayPID)
        // After the drain, so every request of the run has been answered and observed.
        let end = readings.read()
        // RSS once the run's garbage has had a moment to be returned.
        usleep(500_000)
        let settled = setup.gatewayPID.flatMap { ProcessSample.read(pid: $0) }
        driver.close()
        setup.tearDown(keepFiles: options.keepFiles)

        var result = BenchResult(
            options: options, concurrency: plan.concurrency, grpcConnections: plan.grpcConnections, outcome: outcome)
        result.record(setup)
        result.record(idle: idle, before: before, end: end, settled: settled)
        result.record(stalls)
        print(options.json ? result.json() : result.table())
        return outcome.report.requests > 0 ? 0 : 1
    }

    /// The warm-up phase (`--warmup` RPCs, sent and answered) before anything is measured.
    private static func warmUp(_ driver: BenchDriver, _ plan: BenchPlan, quiet: Bool) async {
        guard let warmup = plan.warmup else { return }
        let outcome = await driver.run(warmup, duration: .seconds(30), drainLimit: plan.drainLimit)
        if !quiet {
            printError(
                "bench: warm-up: \(outcome.report.requests) of \(warmup.maxRequests) RPCs answered"
                    + (outcome.report.rpcErrors.isEmpty ? "" : ", errors: \(outcome.report.rpcErrors)"))
        }
    }

    /// The measured phase, with the stall probe running under --rate and a progress line about
    /// once a second (unless --quiet).
    private static func measuredPhase(
        _ driver: BenchDriver, _ plan: BenchPlan, quiet: Bool, gatewayPID: pid_t?
    ) async -> (BenchDriver.Outcome, BenchStallProbe.Reading?) {
        let stallProbe = plan.measured.rate != nil ? BenchStallProbe() : nil
        stallProbe?.start()
        var progress = BenchProgress(tokensPerRequest: plan.tokensPerRequest, gatewayPID: gatewayPID)
        let outcome = await driver.run(plan.measured, duration: plan.duration, drainLimit: plan.drainLimit) {
            shared, elapsed in
            guard !quiet else { return }
            printError(progress.line(shared, elapsed: elapsed))
        }
        return (outcome, stallProbe?.stop())
    }

    /// The request every RPC sends: one notification to `tokens-per-send` distinct tokens (`tokens`
    /// when the set-up got them from the mock: Web Push subscriptions); for FCM, ADM and Web Push
    /// with data too.
    static func requestMessage(_ options: BenchOptions, tokens: [String]? = nil) -> [UInt8] {
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
        notification.tokens = tokens ?? (0..<options.tokensPerSend).map(options.provider.token)
        var request = PushgateV1.SendRequest()
        request.notifications = [notification]
        return request.serializedBytes()
    }
}
