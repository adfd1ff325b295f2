import Synchronization

/// Observations counted in fixed buckets, with their sum: one series of a ``HistogramFamily``.
///
/// An observation is a short scan of the (few, sorted) upper bounds, one relaxed atomic add on its
/// bucket and a compare-exchange on the sum. Buckets are stored per bucket, not cumulatively; the
/// exposition adds them up, and `_count` is their total.
public final class Histogram: @unchecked Sendable {
    let labelText: String
    /// Finite, strictly increasing upper bounds; `+Inf` is implied.
    let upperBounds: [Double]
    /// `upperBounds.count + 1` counters, the last one for `+Inf`. Allocated once, never resized.
    private let buckets: UnsafeMutablePointer<Atomic<Int>>
    private let sumBits = Atomic<UInt64>(0.0.bitPattern)

    init(labelText: String, upperBounds: [Double]) {
        self.labelText = labelText
        self.upperBounds = upperBounds
        buckets = .allocate(capacity: upperBounds.count + 1)
        for index in 0...upperBounds.count {
            (buckets + index).initialize(to: Atomic(0))
        }
    }

    deinit {
        buckets.deinitialize(count: upperBounds.count + 1)
        buckets.deallocate()
    }

    /// Records one value (in the histogram's unit, seconds for the `_seconds` metrics).
    public func observe(_ value: Double) {
        var index = 0
        let bounds = upperBounds.count
        while index < bounds && !(value <= upperBounds[index]) { index += 1 }
        buckets[index].wrappingAdd(1, ordering: .relaxed)
        var current = sumBits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + value).bitPattern
            let (exchanged, original) = sumBits.compareExchange(expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Records a duration given in nanoseconds, as seconds.
    public func observe(nanoseconds: UInt64) {
        observe(Double(nanoseconds) / 1e9)
    }

    /// Records a `Duration`, as seconds.
    public func observe(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        observe(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// A consistent-enough copy: per-bucket counts (last is `+Inf`), their total, and the sum.
    public func snapshot() -> (buckets: [Int], count: Int, sum: Double) {
        var counts: [Int] = []
        counts.reserveCapacity(upperBounds.count + 1)
        for index in 0...upperBounds.count {
            counts.append(buckets[index].load(ordering: .relaxed))
        }
        return (counts, counts.reduce(0, +), Double(bitPattern: sumBits.load(ordering: .relaxed)))
    }

    /// Observations so far.
    public var count: Int { snapshot().count }
}
