import PushMetrics
import PushPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The gateway's, the mock's and this process's CPU and memory, and the gateway's provider-request
/// histogram, read at one moment: before the measured phase and after it.
struct BenchReadings {
    var gateway: ProcessSample?
    var mock: ProcessSample?
    var client: ProcessSample?
    var provider: HistogramReading?

    /// Where the readings come from; nil: not known (a --target without --gateway-pid, no metrics).
    struct Sources {
        let gatewayPID: pid_t?
        let mockPID: pid_t?
        let metrics: (host: String, port: Int)?

        /// The processes first, then the gateway's /metrics (a blocking scrape of up to a second).
        func read() -> BenchReadings {
            BenchReadings(
                gateway: gatewayPID.flatMap { ProcessSample.read(pid: $0) },
                mock: mockPID.flatMap { ProcessSample.read(pid: $0) },
                client: ProcessSample.readSelf(),
                provider: metrics.flatMap { ProviderLatency.scrape(host: $0.host, port: $0.port) })
        }
    }
}

extension ProcessSample {
    /// The CPU used between two samples, in percent of one core over `seconds`; nil without both.
    static func cpuPercent(from start: ProcessSample?, to end: ProcessSample?, over seconds: Double) -> Double? {
        guard let start, let end, seconds > 0 else { return nil }
        return Double(end.cpuTicks - start.cpuTicks) / ticksPerSecond / seconds * 100
    }
}

extension BenchResult {
    /// What the setup knows once it has been torn down: its description, the gateway's exit status
    /// and the requests the mock counted.
    mutating func record(_ setup: BenchSetup) {
        self.setup = setup.description
        mockRequests = mockFinalStat(setup.mockFinalLog, key: "requests")
        gatewayExit = setup.gatewayExit
    }

    /// The gateway's RSS idle, after the warm-up (`before`) and after the run (once `settled`,
    /// else at its `end`); everyone's CPU over the measured phase; the provider-request latency
    /// between the two scrapes.
    mutating func record(idle: ProcessSample?, before: BenchReadings, end: BenchReadings, settled: ProcessSample?) {
        rssIdleKiB = idle?.rssKiB
        rssAfterWarmupKiB = before.gateway?.rssKiB
        rssEndKiB = settled?.rssKiB ?? end.gateway?.rssKiB
        rssPeakKiB = settled?.peakRSSKiB ?? end.gateway?.peakRSSKiB
        gatewayThreads = end.gateway?.threads
        gatewayCPU = ProcessSample.cpuPercent(from: before.gateway, to: end.gateway, over: seconds)
        mockCPU = ProcessSample.cpuPercent(from: before.mock, to: end.mock, over: seconds)
        clientCPU = ProcessSample.cpuPercent(from: before.client, to: end.client, over: seconds)
        if let start = before.provider, let end = end.provider { providerLatency = end.since(start) }
    }

    /// The stall probe's pieces and, when RPCs were sampled, their latency outside its stalls.
    mutating func record(_ stalls: BenchStallProbe.Reading?) {
        stallProbe = stalls?.durations
        if let windows = stalls?.stalls, !report.samples.isEmpty {
            let split = windows.outside(report.samples)
            latencyOutsideStalls = split.latency
            rpcsInStalls = split.inStalls
        }
    }
}
