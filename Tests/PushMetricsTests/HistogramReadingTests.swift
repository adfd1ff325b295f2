import PushMetrics
import Testing

@Suite("Histogram read back from the text format")
struct HistogramReadingTests {
    /// A registry with two series of one family and a family whose name starts the same.
    private func exposition(fast: [Double], slow: [Double]) -> String {
        let registry = MetricsRegistry()
        let family = registry.histogram("req_seconds", help: "Requests.", labels: ["app"], buckets: [0.001, 0.01, 0.1])
        for value in fast { family.labels("a").observe(value) }
        for value in slow { family.labels("b").observe(value) }
        registry.histogram("req_seconds_other", help: "Not this one.", buckets: [0.001]).labels().observe(0.0005)
        return registry.render()
    }

    @Test("series are summed, cumulative counts and sum read back, other families ignored")
    func parse() throws {
        let reading = try #require(
            HistogramReading.parse(
                exposition(fast: [0.0005, 0.0005, 0.005], slow: [0.05, 2]), family: "req_seconds"))
        #expect(reading.upperBounds == [0.001, 0.01, 0.1])
        #expect(reading.cumulative == [2, 3, 4, 5])
        #expect(reading.count == 5)
        #expect(abs(reading.sum - 2.056) < 1e-9)
        #expect(HistogramReading.parse(exposition(fast: [], slow: []), family: "absent_seconds") == nil)
    }

    @Test("the difference of two scrapes; nil when a counter went down or the buckets differ")
    func since() throws {
        let before = try #require(HistogramReading.parse(exposition(fast: [0.0005], slow: []), family: "req_seconds"))
        let after = try #require(
            HistogramReading.parse(
                exposition(fast: [0.0005, 0.005, 0.005], slow: [0.05]), family: "req_seconds"))
        let run = try #require(after.since(before))
        #expect(run.cumulative == [0, 2, 3, 3])
        #expect(abs(try #require(run.mean) - 0.06 / 3) < 1e-9)
        #expect(before.since(after) == nil)
        #expect(run.since(HistogramReading(upperBounds: [1], cumulative: [0, 0], sum: 0)) == nil)
    }

    @Test("quantiles interpolate within the bucket, like histogram_quantile")
    func quantiles() {
        // 10 at or below 1 ms, 10 more at or below 10 ms, nothing above.
        let reading = HistogramReading(upperBounds: [0.001, 0.01, 0.1], cumulative: [10, 20, 20, 20], sum: 0.1)
        #expect(reading.quantile(0.25) == 0.0005)
        #expect(reading.quantile(0.5) == 0.001)
        #expect(abs(reading.quantile(0.75)! - 0.0055) < 1e-12)
        #expect(abs(reading.quantile(1)! - 0.01) < 1e-12)
        // Past the last finite bound: that bound.
        #expect(HistogramReading(upperBounds: [0.001], cumulative: [1, 4], sum: 9).quantile(0.9) == 0.001)
        #expect(HistogramReading(upperBounds: [0.001], cumulative: [0, 0], sum: 0).quantile(0.5) == nil)
    }
}
