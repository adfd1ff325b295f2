import PushPosix
import PushSync

/// Counters, gauges and histograms, each a family of series told apart by their label values, and
/// their rendering in the Prometheus text exposition format 0.0.4.
///
/// Registering a family, and resolving a label set to a series, takes a lock and builds strings:
/// do it once and keep the handle. Recording on a handle is atomic and lock-free. Families render
/// in registration order, series in the order they were first resolved.
///
/// Knows nothing about what is measured; callers name and label their metrics.
public final class MetricsRegistry: Sendable {
    private let families = Locked<[any MetricFamily]>([])

    public init() {}

    /// The `Content-Type` of ``render()``'s output.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A counter family. Names end in `_total` by convention.
    public func counter(_ name: String, help: String, labels: [String] = []) -> CounterFamily {
        register(CounterFamily(name: name, help: help, labelNames: labels))
    }

    /// A gauge family whose series are set from code.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> GaugeFamily {
        register(GaugeFamily(name: name, help: help, labelNames: labels))
    }

    /// A gauge family computed at scrape time: `sample` returns one value per label set (label
    /// values in the order of `labels`). It runs on the scraping thread; keep it quick.
    public func gauge(
        _ name: String, help: String, labels: [String] = [],
        sample: @escaping @Sendable () -> [(labels: [String], value: Double)]
    ) {
        _ = register(GaugeFunctionFamily(name: name, help: help, labelNames: labels, sample: sample))
    }

    /// A counter family computed at scrape time (a count kept elsewhere, such as the kernel's CPU
    /// time of the process); as ``gauge(_:help:labels:sample:)`` otherwise.
    public func counter(
        _ name: String, help: String, labels: [String] = [],
        sample: @escaping @Sendable () -> [(labels: [String], value: Double)]
    ) {
        _ = register(GaugeFunctionFamily(name: name, help: help, labelNames: labels, type: "counter", sample: sample))
    }

    /// A histogram family with fixed upper bounds (finite, strictly increasing; `+Inf` is added).
    public func histogram(
        _ name: String, help: String, labels: [String] = [], buckets: [Double]
    ) -> HistogramFamily {
        precondition(!labels.contains("le"), "histogram \(name): the label name le is reserved")
        precondition(!buckets.isEmpty && buckets.allSatisfy(\.isFinite), "histogram \(name): finite buckets")
        precondition(zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }, "histogram \(name): sorted buckets")
        return register(HistogramFamily(name: name, help: help, labelNames: labels, upperBounds: buckets))
    }

    private func register<Family: MetricFamily>(_ family: Family) -> Family {
        precondition(PrometheusText.isValidMetricName(family.name), "invalid metric name \(family.name)")
        for label in family.labelNames {
            precondition(PrometheusText.isValidLabelName(label), "metric \(family.name): invalid label name \(label)")
        }
        precondition(Set(family.labelNames).count == family.labelNames.count, "metric \(family.name): repeated label")
        families.withLock { families in
            precondition(!families.contains { $0.name == family.name }, "metric \(family.name) registered twice")
            families.append(family)
        }
        return family
    }

    /// Every family in the text exposition format 0.0.4.
    public func render() -> String {
        let families = self.families.withLock { $0 }
        var text = ""
        text.reserveCapacity(4096)
        for family in families {
            family.render(into: &text)
        }
        return text
    }
}

/// One metric name: its help, type and series.
protocol MetricFamily: Sendable {
    var name: String { get }
    var labelNames: [String] { get }
    func render(into text: inout String)
}

/// The series of one family, keyed by their label values, kept in first-resolved order.
final class SeriesTable<Series: AnyObject & Sendable>: Sendable {
    let name: String
    let labelNames: [String]
    private let table = Locked<(byValues: [[String]: Series], ordered: [Series])>(([:], []))

    init(name: String, labelNames: [String]) {
        self.name = name
        self.labelNames = labelNames
    }

    func series(_ values: [String], make: (String) -> Series) -> Series {
        precondition(
            values.count == labelNames.count,
            "metric \(name): \(values.count) label values for labels \(labelNames)")
        return table.withLock { table in
            if let series = table.byValues[values] { return series }
            let series = make(PrometheusText.labels(labelNames, values))
            table.byValues[values] = series
            table.ordered.append(series)
            return series
        }
    }

    var all: [Series] { table.withLock { $0.ordered } }

    /// The series whose label `label` has `value`.
    func matching(_ label: String, _ value: String) -> [Series] {
        guard let index = labelNames.firstIndex(of: label) else { return [] }
        return table.withLock { table in table.byValues.filter { $0.key[index] == value }.map(\.value) }
    }
}

/// A counter name and its series.
public final class CounterFamily: MetricFamily {
    public let name: String
    public let help: String
    public let labelNames: [String]
    private let series: SeriesTable<Counter>

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        series = SeriesTable(name: name, labelNames: labelNames)
    }

    /// The series for these label values (in the order of ``labelNames``), created at first use.
    public func labels(_ values: String...) -> Counter { labels(values) }

    public func labels(_ values: [String]) -> Counter {
        series.series(values) { Counter(labelText: $0) }
    }

    /// The sum of the series whose label `label` has `value` (one app's, over every other label).
    public func total(where label: String, is value: String) -> Int {
        series.matching(label, value).reduce(0) { $0 + $1.value }
    }

    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: "counter", into: &text)
        for counter in series.all {
            PrometheusText.sample(name, labels: counter.labelText, value: counter.value, into: &text)
        }
    }
}

/// A gauge name and its series, set from code.
public final class GaugeFamily: MetricFamily {
    public let name: String
    public let help: String
    public let labelNames: [String]
    private let series: SeriesTable<Gauge>

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        series = SeriesTable(name: name, labelNames: labelNames)
    }

    public func labels(_ values: String...) -> Gauge { labels(values) }

    public func labels(_ values: [String]) -> Gauge {
        series.series(values) { Gauge(labelText: $0) }
    }

    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: "gauge", into: &text)
        for gauge in series.all {
            PrometheusText.sample(name, labels: gauge.labelText, value: gauge.value, into: &text)
        }
    }
}

/// A gauge computed when scraped.
final class GaugeFunctionFamily: MetricFamily {
    let name: String
    let help: String
    let labelNames: [String]
    /// `gauge`, or `counter` for a count read from elsewhere.
    let type: String
    private let sample: @Sendable () -> [(labels: [String], value: Double)]

    init(
        name: String, help: String, labelNames: [String], type: String = "gauge",
        sample: @escaping @Sendable () -> [(labels: [String], value: Double)]
    ) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.type = type
        self.sample = sample
    }

    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: type, into: &text)
        for (values, value) in sample() where values.count == labelNames.count {
            PrometheusText.sample(name, labels: PrometheusText.labels(labelNames, values), value: value, into: &text)
        }
    }
}

/// A histogram name, its buckets and its series.
public final class HistogramFamily: MetricFamily {
    public let name: String
    public let help: String
    public let labelNames: [String]
    public let upperBounds: [Double]
    private let series: SeriesTable<Histogram>
    /// `le="…"` for each bound and `+Inf`, formatted once.
    private let bucketLabels: [String]

    init(name: String, help: String, labelNames: [String], upperBounds: [Double]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.upperBounds = upperBounds
        series = SeriesTable(name: name, labelNames: labelNames)
        bucketLabels = (upperBounds.map(PrometheusText.number) + ["+Inf"]).map { "le=\"\($0)\"" }
    }

    public func labels(_ values: String...) -> Histogram { labels(values) }

    public func labels(_ values: [String]) -> Histogram {
        series.series(values) { [upperBounds] in Histogram(labelText: $0, upperBounds: upperBounds) }
    }

    func render(into text: inout String) {
        PrometheusText.header(name: name, help: help, type: "histogram", into: &text)
        let bucketName = name + "_bucket"
        for histogram in series.all {
            let (buckets, count, sum) = histogram.snapshot()
            let prefix = histogram.labelText.isEmpty ? "" : histogram.labelText + ","
            var cumulative = 0
            for (index, bucket) in buckets.enumerated() {
                cumulative += bucket
                PrometheusText.sample(
                    bucketName, labels: prefix + bucketLabels[index], value: cumulative, into: &text)
            }
            PrometheusText.sample(name + "_sum", labels: histogram.labelText, value: sum, into: &text)
            PrometheusText.sample(name + "_count", labels: histogram.labelText, value: count, into: &text)
        }
    }
}
