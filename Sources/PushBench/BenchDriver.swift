import PushPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A set of connections on client loops, run phase by phase.
final class BenchDriver {
    let loops: [EventLoop]
    let connections: [BenchConnection]

    static func connect(host: String, port: Int, connections count: Int, loops loopCount: Int) async throws
        -> BenchDriver
    {
        var loops: [EventLoop] = []
        for i in 0..<max(1, loopCount) { loops.append(try EventLoop.spawn(name: "bench-\(i)")) }
        var connections: [BenchConnection] = []
        for i in 0..<max(1, count) {
            let connection = BenchConnection(loop: loops[i % loops.count], authority: "\(host):\(port)")
            do {
                try await connection.connect(host: host, port: port)
            } catch {
                for loop in loops { loop.shutdown() }
                throw error
            }
            connections.append(connection)
        }
        return BenchDriver(loops: loops, connections: connections)
    }

    private init(loops: [EventLoop], connections: [BenchConnection]) {
        self.loops = loops
        self.connections = connections
    }

    struct Outcome {
        var report = BenchConnectionReport()
        var elapsedNanos: UInt64 = 0
        /// The run hit the drain limit with calls in flight.
        var drainTimedOut = false
    }

    /// Runs one phase until its count is sent or `duration` passes, then waits (at most
    /// `drainLimit`) for what is in flight. `progress` runs about once a second on this task.
    func run(
        _ workload: BenchWorkload, duration: Duration?, drainLimit: Duration,
        progress: ((BenchShared, UInt64) -> Void)? = nil
    ) async -> Outcome {
        let shared = BenchShared(workload: workload)
        let n = connections.count
        let start = monotonicNanoseconds()
        for (i, connection) in connections.enumerated() {
            let slots = workload.concurrency / n + (i < workload.concurrency % n ? 1 : 0)
            let rate = workload.rate.map { $0 / Double(n) }
            connection.loop.execute { connection.start(shared: shared, slots: slots, rate: rate) }
        }
        let durationNanos = duration.map {
            UInt64($0.components.seconds) * 1_000_000_000 + UInt64($0.components.attoseconds / 1_000_000_000)
        }
        let drainNanos = UInt64(drainLimit.components.seconds) * 1_000_000_000
        var stopAt: UInt64?
        var nextProgress = start + 1_000_000_000
        var drainTimedOut = false
        // Bounded: ends when every connection is done, or at duration + drain limit.
        while shared.finishedConnections.load(ordering: .relaxed) < n {
            try? await Task.sleep(for: .milliseconds(20))
            let now = monotonicNanoseconds()
            if stopAt == nil, let durationNanos, now - start >= durationNanos {
                stopAt = now
            } else if stopAt == nil, shared.exhausted {
                stopAt = now
            }
            if let stopAt, !shared.stopping.load(ordering: .relaxed) {
                _ = stopAt
                shared.stopping.store(true, ordering: .relaxed)
                for connection in connections { connection.loop.execute { connection.poke() } }
            }
            if let stopAt, now - stopAt > drainNanos {
                drainTimedOut = true
                break
            }
            if now >= nextProgress {
                progress?(shared, now - start)
                nextProgress += 1_000_000_000
            }
        }
        let end = monotonicNanoseconds()
        var outcome = Outcome(elapsedNanos: end - start, drainTimedOut: drainTimedOut)
        for connection in connections {
            let report = await withCheckedContinuation {
                (continuation: CheckedContinuation<BenchConnectionReport, Never>) in
                connection.loop.execute { continuation.resume(returning: connection.collect()) }
            }
            outcome.report.merge(report)
        }
        return outcome
    }

    func close() {
        for connection in connections { connection.loop.execute { connection.close() } }
        usleep(50_000)
        for loop in loops { loop.shutdown() }
    }
}
