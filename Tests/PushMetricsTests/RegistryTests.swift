import Dispatch
import PushMetrics
import Testing

@Suite("Metrics registry and text format")
struct RegistryTests {
    @Test("counters render with HELP, TYPE and labels in first-resolved order")
    func counters() {
        let registry = MetricsRegistry()
        let family = registry.counter("app_requests_total", help: "Requests handled.", labels: ["app", "code"])
        let ok = family.labels("a", "200")
        ok.increment()
        ok.increment(by: 41)
        family.labels("b", "404").increment()
        #expect(family.labels("a", "200") === ok, "the same label values resolve to the same handle")
        let plain = registry.counter("app_starts_total", help: "Starts.")
        plain.labels().increment()
        #expect(
            registry.render() == """
                # HELP app_requests_total Requests handled.
                # TYPE app_requests_total counter
                app_requests_total{app="a",code="200"} 42
                app_requests_total{app="b",code="404"} 1
                # HELP app_starts_total Starts.
                # TYPE app_starts_total counter
                app_starts_total 1

                """)
    }

    @Test("a counter read from elsewhere when scraped renders as a counter; a gauge function as a gauge")
    func scrapedCounters() {
        let registry = MetricsRegistry()
        registry.counter("process_cpu_seconds_total", help: "CPU.") { [([], 1.5)] }
        registry.gauge("queue_depth", help: "Depth.", labels: ["app"]) { [(["a"], 3)] }
        #expect(
            registry.render() == """
                # HELP process_cpu_seconds_total CPU.
                # TYPE process_cpu_seconds_total counter
                process_cpu_seconds_total 1.5
                # HELP queue_depth Depth.
                # TYPE queue_depth gauge
                queue_depth{app="a"} 3

                """)
    }

    @Test("label values and help text are escaped")
    func escaping() {
        let registry = MetricsRegistry()
        registry.counter("x_total", help: "back\\slash and\nnewline", labels: ["v"])
            .labels("quote\" back\\ nl\n end").increment()
        let text = registry.render()
        #expect(text.contains("# HELP x_total back\\\\slash and\\nnewline\n"))
        #expect(text.contains("x_total{v=\"quote\\\" back\\\\ nl\\n end\"} 1\n"))
        #expect(PrometheusText.escapeLabelValue("plain") == "plain")
    }

    @Test("histograms: cumulative buckets, +Inf, _sum and _count")
    func histogram() {
        let registry = MetricsRegistry()
        let family = registry.histogram("op_seconds", help: "Op time.", labels: ["op"], buckets: [0.005, 0.1, 1])
        let series = family.labels("read")
        for value in [0.001, 0.005, 0.05, 0.5, 2, 3] { series.observe(value) }
        series.observe(.milliseconds(20))
        series.observe(nanoseconds: 250_000_000)
        #expect(
            registry.render() == """
                # HELP op_seconds Op time.
                # TYPE op_seconds histogram
                op_seconds_bucket{op="read",le="0.005"} 2
                op_seconds_bucket{op="read",le="0.1"} 4
                op_seconds_bucket{op="read",le="1"} 6
                op_seconds_bucket{op="read",le="+Inf"} 8
                op_seconds_sum{op="read"} 5.826
                op_seconds_count{op="read"} 8

                """)
        let unlabeled = registry.histogram("rt_seconds", help: "RT.", buckets: [1])
        unlabeled.labels().observe(0.5)
        #expect(registry.render().contains("rt_seconds_bucket{le=\"1\"} 1\nrt_seconds_bucket{le=\"+Inf\"} 1\n"))
        #expect(registry.render().contains("rt_seconds_sum 0.5\nrt_seconds_count 1\n"))
    }

    @Test("gauges: set from code and computed at scrape time")
    func gauges() {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("queue_items", help: "Items.").labels()
        gauge.set(5)
        gauge.increment()
        gauge.decrement()
        gauge.add(0.5)
        registry.gauge("open_things", help: "Things.", labels: ["kind"]) {
            [(["a"], 3), (["b"], .infinity), (["wrong", "arity"], 1)]
        }
        let text = registry.render()
        #expect(text.contains("# TYPE queue_items gauge\nqueue_items 5.5\n"))
        #expect(text.contains("open_things{kind=\"a\"} 3\nopen_things{kind=\"b\"} +Inf\n"))
        #expect(!text.contains("wrong"))
    }

    @Test("numbers: integers without .0, shortest round-trip decimals, Inf and NaN")
    func numbers() {
        #expect(PrometheusText.number(1) == "1")
        #expect(PrometheusText.number(0.005) == "0.005")
        #expect(PrometheusText.number(2.5) == "2.5")
        #expect(PrometheusText.number(-3) == "-3")
        #expect(PrometheusText.number(.infinity) == "+Inf")
        #expect(PrometheusText.number(-.infinity) == "-Inf")
        #expect(PrometheusText.number(.nan) == "NaN")
        #expect(Double(PrometheusText.number(1e-7)) == 1e-7)
    }

    @Test("names are checked")
    func names() {
        #expect(PrometheusText.isValidMetricName("pushgate_rpc_total"))
        #expect(PrometheusText.isValidMetricName("a:b_c"))
        #expect(!PrometheusText.isValidMetricName("9lives"))
        #expect(!PrometheusText.isValidMetricName("has-dash"))
        #expect(PrometheusText.isValidLabelName("app"))
        #expect(!PrometheusText.isValidLabelName("__reserved"))
        #expect(!PrometheusText.isValidLabelName("a:b"))
    }

    @Test("concurrent increments and observations from several threads add up")
    func concurrency() {
        let registry = MetricsRegistry()
        let counters = registry.counter("hits_total", help: "Hits.", labels: ["k"])
        let histogram = registry.histogram("lat_seconds", help: "Lat.", buckets: [0.5]).labels()
        let threads = 8
        let perThread = 100_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            // Resolve once per thread (as the hot paths do), then increment.
            let shared = counters.labels("shared")
            let own = counters.labels("t\(thread % 2)")
            for index in 0..<perThread {
                shared.increment()
                own.increment(by: 2)
                if index % 10 == 0 { histogram.observe(index % 20 == 0 ? 0.25 : 1) }
            }
        }
        #expect(counters.labels("shared").value == threads * perThread)
        #expect(counters.labels("t0").value + counters.labels("t1").value == threads * perThread * 2)
        let snapshot = histogram.snapshot()
        #expect(snapshot.count == threads * perThread / 10)
        #expect(snapshot.buckets == [threads * perThread / 20, threads * perThread / 20])
        #expect(snapshot.sum == Double(threads * perThread / 20) * 1.25)
    }
}
