import PushPosix
import PushSync

#if canImport(Glibc)
    import Glibc
#endif

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
    /// Slow pieces kept for ``StallWindows``: after the first ``calibrationPieces`` (all kept), only
    /// those over twice their median, a few percent of one a millisecond; at most this many (16 MB).
    static let pieceLimit = 1_000_000
    static let calibrationPieces = 1_000
    private let stopFlag = Locked(false)
    private let histogram = Locked(LatencyHistogram())
    private let pieces = Locked<[ProbePiece]>([])
    private var thread = pthread_t()
    private var started = false

    func start() {
        if let thread = try? startThread("bench stall probe", { [self] in run() }) {
            self.thread = thread
            started = true
        }
    }

    /// What a run of the probe measured: the durations of its pieces, in nanoseconds, and when the
    /// machine was stalled.
    typealias Reading = (durations: LatencyHistogram, stalls: StallWindows)

    /// Stops the thread; what it measured (nil if it never ran).
    func stop() -> Reading? {
        guard started else { return nil }
        stopFlag.withLock { $0 = true }
        pthread_join(thread, nil)
        started = false
        let result = histogram.withLock { $0 }
        guard result.total > 0, let median = result.quantile(0.5) else { return nil }
        return (result, StallWindows(pieces: pieces.withLock { $0 }, slowerThan: median * StallWindows.factor))
    }

    private func run() {
        var local = LatencyHistogram()
        var kept: [ProbePiece] = []
        kept.reserveCapacity(Self.calibrationPieces)
        var keepOver: UInt64?
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
            let piece = ProbePiece(begin: begin, duration: end &- begin)
            if let keepOver {
                if piece.duration > keepOver && kept.count < Self.pieceLimit { kept.append(piece) }
            } else {
                kept.append(piece)
                if kept.count == Self.calibrationPieces, let median = local.quantile(0.5) {
                    keepOver = median * 2
                    kept.removeAll { $0.duration <= median * 2 }
                }
            }
            nanosleep(&pause, nil)
        }
        // Keeps the arithmetic from being optimized away.
        if state == 42 { print("", terminator: "") }
        histogram.withLock { $0 = local }
        pieces.withLock { $0 = kept }
    }
}

/// One piece of the probe's fixed work: when it began and how long it took (ns, CLOCK_MONOTONIC).
struct ProbePiece {
    let begin: UInt64
    let duration: UInt64
}

/// One RPC of a rate run: when it was submitted and how long it took (ns, CLOCK_MONOTONIC).
struct RPCSample {
    let sentAt: UInt64
    let latency: UInt64
}

/// The spans of a run in which the machine was stalled: pieces of the probe's fixed work that took
/// over ``factor`` times the median, merged when less than ``mergeGap`` apart (the probe sleeps a
/// millisecond between pieces, and a stall lasts from a few to tens of milliseconds).
///
/// With it an RPC latency tail can be split: the RPCs in flight during a stall, and the others,
/// whose percentiles are the software's own on this machine. The target is still judged on all of
/// them; this only says where the tail comes from.
struct StallWindows {
    static let factor: UInt64 = 5
    static let mergeGap: UInt64 = 2_000_000
    /// Sorted, non-overlapping [begin, end).
    private(set) var spans: [(begin: UInt64, end: UInt64)] = []

    init(pieces: [ProbePiece], slowerThan threshold: UInt64) {
        for piece in pieces where piece.duration > threshold {
            let end = piece.begin &+ piece.duration
            if let last = spans.last, piece.begin <= last.end &+ Self.mergeGap {
                spans[spans.count - 1].end = max(last.end, end)
            } else {
                spans.append((piece.begin, end))
            }
        }
    }

    /// Whether [start, end) meets a stall.
    func overlaps(_ start: UInt64, _ end: UInt64) -> Bool {
        // The first span that ends after `start`; spans are sorted by begin and by end alike.
        var low = 0
        var high = spans.count
        while low < high {
            let mid = (low + high) / 2
            if spans[mid].end <= start { low = mid + 1 } else { high = mid }
        }
        return low < spans.count && spans[low].begin < end
    }

    /// The latencies of the RPCs that met no stall, and how many did meet one.
    func outside(_ samples: [RPCSample]) -> (latency: LatencyHistogram, inStalls: Int) {
        var clean = LatencyHistogram()
        var inStalls = 0
        for sample in samples {
            if overlaps(sample.sentAt, sample.sentAt &+ sample.latency) {
                inStalls += 1
            } else {
                clean.record(sample.latency)
            }
        }
        return (clean, inStalls)
    }
}
