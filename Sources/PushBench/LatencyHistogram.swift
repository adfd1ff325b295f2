// `pushgate bench`: latencies (RPCs, the stall probe's pieces of work) as a histogram.

/// Latencies in nanoseconds in a fixed-size log-linear histogram: exact below 64 ns, then 32
/// linear buckets per power of two (at most 1/32 ≈ 3% above the true value, as reported values
/// are bucket upper edges). 1,920 counters whatever the number of samples.
struct LatencyHistogram {
    static let bucketCount = 64 + 58 * 32
    private(set) var counts = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount)
    private(set) var total: UInt64 = 0
    private(set) var maxValue: UInt64 = 0
    private(set) var sum: Double = 0

    static func index(_ value: UInt64) -> Int {
        if value < 64 { return Int(value) }
        let msb = 63 - value.leadingZeroBitCount
        let shift = msb - 5
        let top = Int(value >> UInt64(shift))
        return 64 + (shift - 1) * 32 + (top - 32)
    }

    /// The largest value that falls in bucket `index`.
    static func upperEdge(_ index: Int) -> UInt64 {
        if index < 64 { return UInt64(index) }
        let shift = (index - 64) / 32 + 1
        let top = UInt64((index - 64) % 32 + 32)
        return ((top + 1) << UInt64(shift)) - 1
    }

    mutating func record(_ nanoseconds: UInt64) {
        counts[Self.index(nanoseconds)] &+= 1
        total &+= 1
        sum += Double(nanoseconds)
        if nanoseconds > maxValue { maxValue = nanoseconds }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for i in 0..<counts.count { counts[i] &+= other.counts[i] }
        total &+= other.total
        sum += other.sum
        maxValue = max(maxValue, other.maxValue)
    }

    /// The value at quantile `q` (0...1): the upper edge of the bucket holding that rank, capped
    /// at the maximum seen. nil without samples.
    func quantile(_ q: Double) -> UInt64? {
        guard total > 0 else { return nil }
        let rank = max(1, UInt64((q * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank { return min(Self.upperEdge(i), maxValue) }
        }
        return maxValue
    }

    var mean: Double? { total > 0 ? sum / Double(total) : nil }

    /// The share of samples in buckets wholly above `value` (0 without samples).
    func fraction(above value: UInt64) -> Double {
        guard total > 0 else { return 0 }
        var above: UInt64 = 0
        for (i, count) in counts.enumerated() where count > 0 && (i == 0 ? 0 : Self.upperEdge(i - 1)) >= value {
            above += count
        }
        return Double(above) / Double(total)
    }
}
