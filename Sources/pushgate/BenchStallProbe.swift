#if canImport(Glibc)
import Glibc
#endif
import PushPosix

/// A reference for the latency figures, measured in the same run: a thread of the bench client
/// that every millisecond does the same fixed piece of arithmetic (tens of microseconds) and
/// times it.
///
/// On a steady machine the piece always takes about as long. When the whole machine is slowed
/// for a moment (a virtual machine whose CPU its host gives to someone else, or contention) it
/// takes many times longer, and so does every request in flight in that moment, in every
/// process. A latency tail that matches a tail here is the machine's, not the gateway's: the
/// table shows both. The probe costs a few percent of one core.
final class BenchStallProbe: @unchecked Sendable {
    /// Iterations of the fixed piece: about 20-30 µs on the machines we run on.
    static let iterations = 10_000
    private let stopFlag = Locked(false)
    private let histogram = Locked(LatencyHistogram())
    private var thread = pthread_t()
    private var started = false

    func start() {
        if let thread = try? startThread("bench stall probe", { [self] in run() }) {
            self.thread = thread
            started = true
        }
    }

    /// Stops the thread; the durations of the pieces, in nanoseconds (nil if it never ran).
    func stop() -> LatencyHistogram? {
        guard started else { return nil }
        stopFlag.withLock { $0 = true }
        pthread_join(thread, nil)
        started = false
        let result = histogram.withLock { $0 }
        return result.total > 0 ? result : nil
    }

    private func run() {
        var local = LatencyHistogram()
        var state = UInt64(truncatingIfNeeded: monotonicNanoseconds()) | 1
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        while !stopFlag.withLock({ $0 }) {
            let begin = monotonicNanoseconds()
            // xorshift64: a chain of dependent shifts and xors the compiler cannot shortcut.
            for _ in 0..<Self.iterations {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
            }
            let end = monotonicNanoseconds()
            local.record(end &- begin)
            nanosleep(&pause, nil)
        }
        // Keeps the arithmetic from being optimized away.
        if state == 42 { print("", terminator: "") }
        histogram.withLock { $0 = local }
    }
}
