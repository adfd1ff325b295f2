import Testing

@testable import PushBench

@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    @Test("values below 64 ns have a bucket each")
    func exactBelow64() {
        for value in UInt64(0)..<64 {
            #expect(LatencyHistogram.index(value) == Int(value))
            #expect(LatencyHistogram.upperEdge(Int(value)) == value)
        }
        #expect(LatencyHistogram.index(64) == 64)
    }

    @Test("every bucket's upper edge falls in that bucket, and the next value in the next one")
    func edgesRoundTrip() {
        // The last bucket's edge would be 2^64 - 1 (its computation overflows); no latency gets there.
        for index in 0..<(LatencyHistogram.bucketCount - 1) {
            let edge = LatencyHistogram.upperEdge(index)
            #expect(LatencyHistogram.index(edge) == index)
            #expect(LatencyHistogram.index(edge + 1) == index + 1)
        }
        #expect(LatencyHistogram.index(UInt64.max) == LatencyHistogram.bucketCount - 1)
    }

    @Test(
        "a reported value is at most 1/32 above the true one",
        arguments: [UInt64(64), 65, 100, 1_000, 12_345, 1_000_000, 1_234_567, 999_999_999, 30_000_000_000, 1 << 62])
    func relativeError(value: UInt64) {
        let edge = LatencyHistogram.upperEdge(LatencyHistogram.index(value))
        #expect(edge >= value)
        #expect(edge - value <= value / 32)
    }

    @Test("no samples: no quantiles, no mean, nothing above anything")
    func empty() {
        let histogram = LatencyHistogram()
        #expect(histogram.total == 0)
        #expect(histogram.quantile(0.5) == nil)
        #expect(histogram.mean == nil)
        #expect(histogram.fraction(above: 0) == 0)
    }

    @Test("quantiles are the upper edge of the bucket holding the rank, capped at the maximum")
    func quantiles() {
        var histogram = LatencyHistogram()
        // 1,998,847 and 7,995,391 are bucket upper edges (61 << 15 - 1, 61 << 17 - 1): reported exactly.
        for _ in 0..<90 { histogram.record(1_998_847) }
        for _ in 0..<10 { histogram.record(7_995_391) }
        #expect(histogram.total == 100)
        #expect(histogram.quantile(0) == 1_998_847)
        #expect(histogram.quantile(0.5) == 1_998_847)
        #expect(histogram.quantile(0.9) == 1_998_847)
        #expect(histogram.quantile(0.91) == 7_995_391)
        #expect(histogram.quantile(0.999) == 7_995_391)
        #expect(histogram.quantile(1) == 7_995_391)
        #expect(histogram.maxValue == 7_995_391)
        #expect(histogram.mean == 2_598_501.4)

        // One sample inside a bucket: the edge is above it, so the maximum caps it.
        var one = LatencyHistogram()
        one.record(1_000_000)
        #expect(LatencyHistogram.upperEdge(LatencyHistogram.index(1_000_000)) == 1_015_807)
        #expect(one.quantile(0.5) == 1_000_000)
    }

    @Test("merging is recording both sets of samples")
    func merge() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        var both = LatencyHistogram()
        for value in [UInt64(5), 70, 1_000, 50_000] {
            a.record(value)
            both.record(value)
        }
        for value in [UInt64(3), 9_000_000, 70] {
            b.record(value)
            both.record(value)
        }
        a.merge(b)
        #expect(a.counts == both.counts)
        #expect(a.total == 7)
        #expect(a.maxValue == 9_000_000)
        #expect(a.sum == both.sum)
        #expect(a.quantile(0.5) == both.quantile(0.5))
    }

    @Test("fraction(above:) counts the samples in buckets wholly above the value")
    func fractionAbove() {
        var histogram = LatencyHistogram()
        for value in [UInt64(10), 20, 30, 1_000] { histogram.record(value) }
        #expect(histogram.fraction(above: 25) == 0.5)  // 30 and 1,000
        #expect(histogram.fraction(above: 30) == 0.25)  // not 30 itself
        #expect(histogram.fraction(above: 100) == 0.25)
        #expect(histogram.fraction(above: 5_000) == 0)
        #expect(histogram.fraction(above: 1) == 1)
    }
}
