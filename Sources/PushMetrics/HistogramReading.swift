/// One histogram family read back from a text exposition (``MetricsRegistry/render()``), its
/// series summed: what a scraper such as `pushgate bench` needs to turn two scrapes into the
/// latency of what happened between them.
///
/// The buckets are fixed, so quantiles are interpolated within a bucket the way Prometheus'
/// `histogram_quantile` does; the mean is exact (`_sum / _count`).
public struct HistogramReading: Equatable, Sendable {
    /// Finite upper bounds in seconds, ascending; `+Inf` follows.
    public var upperBounds: [Double]
    /// Cumulative counts, one per bound and a last one for `+Inf`.
    public var cumulative: [Double]
    public var sum: Double

    public var count: Double { cumulative.last ?? 0 }
    public var mean: Double? { count > 0 ? sum / count : nil }

    public init(upperBounds: [Double], cumulative: [Double], sum: Double) {
        self.upperBounds = upperBounds
        self.cumulative = cumulative
        self.sum = sum
    }

    /// Reads histogram `family` (e.g. `pushgate_provider_request_seconds`) from a text exposition,
    /// adding up its series whatever their labels; nil when it has no `_bucket` samples there.
    public static func parse(_ text: String, family: String) -> HistogramReading? {
        var buckets: [Double: Double] = [:]
        var infinity = 0.0
        var sum = 0.0
        var sawBucket = false
        for line in text.split(separator: "\n") where line.hasPrefix(family) {
            let rest = line.dropFirst(family.count)
            guard let space = rest.lastIndex(of: " "), let value = Double(rest[rest.index(after: space)...]) else {
                continue
            }
            // The name must end with the suffix: not a longer name that starts the same.
            if rest.hasPrefix("_bucket{") {
                guard let bound = labelValue(rest, "le") else { continue }
                sawBucket = true
                if bound == "+Inf" {
                    infinity += value
                } else if let upper = Double(bound) {
                    buckets[upper, default: 0] += value
                }
            } else if rest.hasPrefix("_sum{") || rest.hasPrefix("_sum ") {
                sum += value
            }
        }
        guard sawBucket else { return nil }
        let bounds = buckets.keys.sorted()
        return HistogramReading(upperBounds: bounds, cumulative: bounds.map { buckets[$0]! } + [infinity], sum: sum)
    }

    /// What was observed after `earlier` (same buckets); nil if the buckets differ or a counter
    /// went down (the gateway restarted).
    public func since(_ earlier: HistogramReading) -> HistogramReading? {
        guard earlier.upperBounds == upperBounds else { return nil }
        let counts = zip(cumulative, earlier.cumulative).map { $0 - $1 }
        guard counts.allSatisfy({ $0 >= 0 }) else { return nil }
        return HistogramReading(upperBounds: upperBounds, cumulative: counts, sum: sum - earlier.sum)
    }

    /// The `q` quantile in seconds, linear within its bucket (from 0 for the first); the last
    /// finite bound when it falls in `+Inf`; nil with no observations.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = q * count
        var lowerBound = 0.0
        var below = 0.0
        for (index, upper) in upperBounds.enumerated() {
            let atOrBelow = cumulative[index]
            if atOrBelow >= rank {
                let inBucket = atOrBelow - below
                guard inBucket > 0 else { return upper }
                return lowerBound + (upper - lowerBound) * (rank - below) / inBucket
            }
            lowerBound = upper
            below = atOrBelow
        }
        return upperBounds.last
    }

    /// The value of label `name` in a sample line's `{…}` (values here never hold quotes).
    private static func labelValue(_ line: Substring, _ name: String) -> Substring? {
        let key = Array((name + "=\"").utf8)
        let bytes = Array(line.utf8)
        var index = 0
        while index + key.count <= bytes.count {
            let atLabelStart =
                index > 0 && (bytes[index - 1] == UInt8(ascii: "{") || bytes[index - 1] == UInt8(ascii: ","))
            if atLabelStart && bytes[index..<(index + key.count)].elementsEqual(key) {
                let start = index + key.count
                guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                return Substring(String(decoding: bytes[start..<end], as: UTF8.self))
            }
            index += 1
        }
        return nil
    }
}
