#if canImport(Glibc)
import Glibc
#endif
import PushMetrics

// `pushgate bench`: the numbers — a scanner that counts Results
// without building them, and the /proc readings of a child process.

/// Counts the Results of a serialized `SendResponse` straight from the protobuf wire format
/// (field 1: Result; in a Result, 3: status, 5: reason), so a 1,000-token response costs the bench
/// client no allocations unless something was not delivered.
struct ResultTally {
    var results = 0
    var delivered = 0
    var rejected = 0
    var failed = 0
    var other = 0
    /// "REJECTED BadDeviceToken", "FAILED DeadlineExceeded", "RPC RESOURCE_EXHAUSTED", ...
    var reasons: [String: Int] = [:]

    var errors: Int { rejected + failed + other }

    mutating func merge(_ other: ResultTally) {
        results += other.results
        delivered += other.delivered
        rejected += other.rejected
        failed += other.failed
        self.other += other.other
        for (reason, count) in other.reasons { reasons[reason, default: 0] += count }
    }

    /// Adds the results of one SendResponse; false if the bytes are not a valid SendResponse.
    mutating func scanSendResponse(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = WireReader(buffer[...])
            while !reader.atEnd {
                guard let (field, wireType) = reader.tag() else { return false }
                if field == 1 && wireType == 2 {
                    guard let result = reader.lengthDelimited() else { return false }
                    guard scanResult(result) else { return false }
                } else if !reader.skip(wireType) {
                    return false
                }
            }
            return true
        }
    }

    private mutating func scanResult(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        var reader = WireReader(bytes)
        var status: UInt64 = 0
        var reason: Slice<UnsafeBufferPointer<UInt8>>?
        while !reader.atEnd {
            guard let (field, wireType) = reader.tag() else { return false }
            switch (field, wireType) {
            case (3, 0):
                guard let value = reader.varint() else { return false }
                status = value
            case (5, 2):
                guard let value = reader.lengthDelimited() else { return false }
                reason = value
            default:
                guard reader.skip(wireType) else { return false }
            }
        }
        results += 1
        let name: String
        switch status {
        case 1:
            delivered += 1
            return true
        case 2:
            rejected += 1
            name = "REJECTED"
        case 3:
            failed += 1
            name = "FAILED"
        default:
            other += 1
            name = "STATUS_\(status)"
        }
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        reasons["\(name) \(text.isEmpty ? "(no reason)" : text)", default: 0] += 1
        return true
    }
}

/// A cursor over protobuf wire-format bytes.
struct WireReader {
    private var bytes: Slice<UnsafeBufferPointer<UInt8>>
    private var position: Int

    init(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    var atEnd: Bool { position >= bytes.endIndex }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.endIndex, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        return nil
    }

    mutating func tag() -> (field: UInt64, wireType: UInt64)? {
        guard let key = varint() else { return nil }
        return (key >> 3, key & 7)
    }

    mutating func lengthDelimited() -> Slice<UnsafeBufferPointer<UInt8>>? {
        guard let length = varint(), length <= UInt64(bytes.endIndex - position) else { return nil }
        let start = position
        position += Int(length)
        return bytes[start..<position]
    }

    mutating func skip(_ wireType: UInt64) -> Bool {
        switch wireType {
        case 0: return varint() != nil
        case 1: return advance(8)
        case 2: return lengthDelimited() != nil
        case 5: return advance(4)
        default: return false
        }
    }

    private mutating func advance(_ count: Int) -> Bool {
        guard bytes.endIndex - position >= count else { return false }
        position += count
        return true
    }
}

/// Memory and CPU of a process, from /proc/PID/status and /proc/PID/stat.
struct ProcessSample {
    /// VmRSS and VmHWM (peak RSS) in KiB.
    var rssKiB: Int
    var peakRSSKiB: Int
    /// utime + stime in clock ticks.
    var cpuTicks: Int
    var threads: Int

    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func read(pid: pid_t) -> ProcessSample? {
        guard let status = readSmallFile("/proc/\(pid)/status"), let stat = readSmallFile("/proc/\(pid)/stat")
        else { return nil }
        var sample = ProcessSample(rssKiB: 0, peakRSSKiB: 0, cpuTicks: 0, threads: 0)
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2 else { continue }
            switch parts[0] {
            case "VmRSS:": sample.rssKiB = Int(parts[1]) ?? 0
            case "VmHWM:": sample.peakRSSKiB = Int(parts[1]) ?? 0
            case "Threads:": sample.threads = Int(parts[1]) ?? 0
            default: break
            }
        }
        // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime is field 14, stime field 15.
        guard fields.count > 13, let utime = Int(fields[11]), let stime = Int(fields[12]) else { return nil }
        sample.cpuTicks = utime + stime
        return sample
    }

    /// This process: CPU from getrusage (threads included), RSS from /proc/self.
    static func readSelf() -> ProcessSample? { read(pid: getpid()) }
}

func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 8192)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            return nil
        }
        if count == 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Monotonic nanoseconds (CLOCK_MONOTONIC, the clock the event loops use).
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

// MARK: Formatting

func formatMillis(_ nanoseconds: UInt64?) -> String {
    guard let nanoseconds else { return "-" }
    let ms = Double(nanoseconds) / 1e6
    return ms < 10 ? formatDecimal(ms, places: 3) : formatDecimal(ms, places: ms < 100 ? 2 : 1)
}

func formatDecimal(_ value: Double, places: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    var text = "\(rounded)"
    if text.contains("e") { return text }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    var fraction = parts.count > 1 ? String(parts[1]) : ""
    while fraction.count < places { fraction += "0" }
    text = String(parts[0]) + (places > 0 ? "." + fraction.prefix(places) : "")
    return text
}

/// 1234567 → "1,234,567".
func formatCount(_ value: Int) -> String {
    let digits = String(abs(value))
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (value < 0 ? "-" : "") + out
}

/// A JSON string literal.
func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}

// MARK: The report

/// Everything a run measured, as a table or one JSON object.
struct BenchResult {
    let options: BenchOptions
    let concurrency: Int
    let grpcConnections: Int
    let outcome: BenchDriver.Outcome
    var setup = ""
    var rssIdleKiB: Int?
    var rssAfterWarmupKiB: Int?
    var rssEndKiB: Int?
    var rssPeakKiB: Int?
    var gatewayThreads: Int?
    var gatewayCPU: Double?
    var mockCPU: Double?
    var clientCPU: Double?
    var mockRequests: Int?
    var gatewayExit: Int32?
    /// The durations of the stall probe's fixed pieces of work (``BenchStallProbe``), with --rate.
    var stallProbe: LatencyHistogram?
    /// With --rate: the latencies of the RPCs in flight at no time the stall probe saw the machine
    /// stalled (``StallWindows``), and how many RPCs were in flight during a stall.
    var latencyOutsideStalls: LatencyHistogram?
    var rpcsInStalls = 0
    /// The gateway's provider-request latency over the measured run (``ProviderLatency``; from the gateway's histogram).
    var providerLatency: HistogramReading?

    /// Of the stall probe: its median piece, its 99th percentile and slowest, and the share of
    /// pieces that took over 5× the median (the machine was stalled).
    var stallSummary: (p50: UInt64, p99: UInt64, max: UInt64, slowFraction: Double)? {
        guard let probe = stallProbe, let p50 = probe.quantile(0.5), let p99 = probe.quantile(0.99) else { return nil }
        return (p50, p99, probe.maxValue, probe.fraction(above: p50 * StallWindows.factor))
    }

    init(options: BenchOptions, concurrency: Int, grpcConnections: Int, outcome: BenchDriver.Outcome) {
        self.options = options
        self.concurrency = concurrency
        self.grpcConnections = grpcConnections
        self.outcome = outcome
    }

    var seconds: Double { Double(outcome.elapsedNanos) / 1e9 }
    var report: BenchConnectionReport { outcome.report }
    var notificationsPerSecond: Double { seconds > 0 ? Double(report.tally.results) / seconds : 0 }
    var deliveredPerSecond: Double { seconds > 0 ? Double(report.tally.delivered) / seconds : 0 }
    var rpcsPerSecond: Double { seconds > 0 ? Double(report.requests) / seconds : 0 }

    /// Every error: RPC-level (gRPC status) and per-token (Result status and reason).
    var errors: [(String, Int)] {
        var all: [String: Int] = [:]
        for (key, count) in report.rpcErrors { all["RPC " + key, default: 0] += count }
        for (key, count) in report.tally.reasons { all["result " + key, default: 0] += count }
        if report.unfinished > 0 { all["unfinished at the drain limit", default: 0] += report.unfinished }
        return all.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
    }

    var workloadDescription: String {
        var parts = ["provider=\(options.provider.rawValue)", "mode=\(options.mode.rawValue)"]
        if options.mode != .publish { parts.append("tokens/send=\(options.tokensPerSend)") }
        if let rate = options.rate {
            parts.append("rate=\(formatDecimal(rate, places: 0))/s (max in flight \(concurrency))")
        } else if options.mode == .stream {
            parts.append("streams=\(concurrency) pipeline=\(options.pipeline)")
        } else {
            parts.append("concurrency=\(concurrency)")
        }
        parts.append("grpc_connections=\(min(grpcConnections, concurrency))")
        if let count = options.count { parts.append("count=\(count)") }
        if let duration = options.duration { parts.append("duration=\(formatDecimal(duration, places: 1))s") }
        return parts.joined(separator: " ")
    }

    func table() -> String {
        var rows: [(String, String)] = []
        let latency = report.latency
        if options.mode != .publish {
            rows.append(("notifications/s", formatCount(Int(notificationsPerSecond.rounded()))
                + "  (\(formatCount(report.tally.results)) results, \(formatCount(report.tally.delivered)) delivered, in \(formatDecimal(seconds, places: 2)) s)"))
        }
        rows.append(("RPC/s", formatDecimal(rpcsPerSecond, places: 1) + "  (\(formatCount(report.requests)) RPCs answered OK)"))
        rows.append((
            "RPC latency (ms)",
            "p50 \(formatMillis(latency.quantile(0.5)))  p90 \(formatMillis(latency.quantile(0.9)))  "
                + "p99 \(formatMillis(latency.quantile(0.99)))  p999 \(formatMillis(latency.quantile(0.999)))  "
                + "max \(formatMillis(latency.total > 0 ? latency.maxValue : nil))"
        ))
        if let clean = latencyOutsideStalls {
            let covered = Int(clean.total) + rpcsInStalls
            rows.append((
                "  outside stalls (ms)",
                "p50 \(formatMillis(clean.quantile(0.5)))  p90 \(formatMillis(clean.quantile(0.9)))  "
                    + "p99 \(formatMillis(clean.quantile(0.99)))  p999 \(formatMillis(clean.quantile(0.999)))  "
                    + "(\(formatCount(Int(clean.total))) RPCs; \(formatCount(rpcsInStalls)) were in flight while the machine stalled"
                    + (covered < report.requests ? "; of the first \(formatCount(covered)) RPCs)" : ")")))
        }
        if let provider = providerLatency, let mean = provider.mean {
            func ms(_ seconds: Double?) -> String { seconds.map { formatDecimal($0 * 1000, places: 3) } ?? "-" }
            rows.append((
                "provider requests (ms)",
                "mean \(ms(mean))  p50 ~\(ms(provider.quantile(0.5)))  p90 ~\(ms(provider.quantile(0.9)))  "
                    + "p99 ~\(ms(provider.quantile(0.99)))  (gateway histogram, \(formatCount(Int(provider.count))) requests)"))
        }
        let errors = self.errors
        if errors.isEmpty {
            rows.append(("errors", "none"))
        } else {
            for (i, (key, count)) in errors.prefix(12).enumerated() {
                rows.append((i == 0 ? "errors" : "", "\(formatCount(count))  \(key)"))
            }
            if errors.count > 12 { rows.append(("", "… \(errors.count - 12) more reasons")) }
        }
        if options.rate != nil {
            rows.append(("rate schedule", "max lag \(formatMillis(report.maxScheduleLagNanos)) ms, sends skipped (in-flight cap) \(formatCount(report.skippedSends))"))
        }
        func mib(_ kib: Int?) -> String { kib.map { formatDecimal(Double($0) / 1024, places: 1) + " MiB" } ?? "-" }
        if rssEndKiB != nil || gatewayCPU != nil {
            rows.append(("gateway RSS", "idle \(mib(rssIdleKiB))  after warm-up \(mib(rssAfterWarmupKiB))  after run \(mib(rssEndKiB))  peak \(mib(rssPeakKiB))"))
            rows.append(("gateway CPU", gatewayCPU.map { formatDecimal($0, places: 0) + "% of one core" } ?? "-"))
        }
        let mock = options.provider.mock
        if let mockCPU { rows.append(("\(mock) CPU", formatDecimal(mockCPU, places: 0) + "% of one core")) }
        if let clientCPU { rows.append(("bench client CPU", formatDecimal(clientCPU, places: 0) + "% of one core")) }
        if let mockRequests { rows.append(("\(mock) requests", formatCount(mockRequests) + " (incl. warm-up)")) }
        if let stall = stallSummary {
            func us(_ nanos: UInt64) -> String { formatDecimal(Double(nanos) / 1000, places: 0) }
            rows.append((
                "machine stall probe",
                "fixed work: p50 \(us(stall.p50)) µs  p99 \(us(stall.p99)) µs  max \(us(stall.max)) µs; "
                    + "over 5× the median \(formatDecimal(stall.slowFraction * 100, places: 2))% of the time"))
        }
        if outcome.drainTimedOut { rows.append(("note", "the drain limit passed with calls in flight")) }
        let width = rows.map(\.0.count).max() ?? 0
        var out = "pushgate bench: \(workloadDescription)\n\(setup)\n"
        let rule = String(repeating: "-", count: width + 2) + "+" + String(repeating: "-", count: 60)
        out += rule + "\n"
        for (name, value) in rows {
            out += name + String(repeating: " ", count: width - name.count) + "  | " + value + "\n"
        }
        out += rule
        return out
    }

    func json() -> String {
        var fields: [(String, String)] = []
        func number(_ value: Double?) -> String { value.map { formatDecimal($0, places: 3) } ?? "null" }
        func int(_ value: Int?) -> String { value.map { "\($0)" } ?? "null" }
        func ms(_ nanos: UInt64?) -> String { nanos.map { formatDecimal(Double($0) / 1e6, places: 4) } ?? "null" }
        let latency = report.latency
        fields.append(("mode", jsonString(options.mode.rawValue)))
        fields.append(("tokens_per_send", options.mode == .publish ? "0" : "\(options.tokensPerSend)"))
        fields.append(("concurrency", "\(concurrency)"))
        fields.append(("pipeline", options.mode == .stream ? "\(options.pipeline)" : "null"))
        fields.append(("rate", number(options.rate)))
        fields.append(("grpc_connections", "\(min(grpcConnections, concurrency))"))
        fields.append(("provider", jsonString(options.provider.rawValue)))
        fields.append(("provider_connections", options.target == nil ? "\(options.connections)" : "null"))
        // The old name, kept for scripts that read it (the provider's connections, APNs or FCM).
        fields.append(("apns_connections", options.target == nil ? "\(options.connections)" : "null"))
        fields.append(("setup", jsonString(setup)))
        fields.append(("elapsed_s", number(seconds)))
        fields.append(("rpcs", "\(report.requests)"))
        fields.append(("rpcs_per_s", number(rpcsPerSecond)))
        fields.append(("results", "\(report.tally.results)"))
        fields.append(("delivered", "\(report.tally.delivered)"))
        fields.append(("rejected", "\(report.tally.rejected)"))
        fields.append(("failed", "\(report.tally.failed)"))
        fields.append(("notifications_per_s", number(notificationsPerSecond)))
        fields.append(("delivered_per_s", number(deliveredPerSecond)))
        fields.append((
            "latency_ms",
            "{\"p50\": \(ms(latency.quantile(0.5))), \"p90\": \(ms(latency.quantile(0.9))), \"p99\": \(ms(latency.quantile(0.99))), "
                + "\"p999\": \(ms(latency.quantile(0.999))), \"max\": \(ms(latency.total > 0 ? latency.maxValue : nil)), "
                + "\"mean\": \(latency.mean.map { formatDecimal($0 / 1e6, places: 4) } ?? "null"), \"samples\": \(latency.total)}"
        ))
        let errors = self.errors.map { "\(jsonString($0.0)): \($0.1)" }.joined(separator: ", ")
        fields.append(("errors", "{" + errors + "}"))
        fields.append(("rpc_errors", "\(report.rpcErrors.values.reduce(0, +))"))
        fields.append(("skipped_sends", "\(report.skippedSends)"))
        fields.append(("max_schedule_lag_ms", ms(report.maxScheduleLagNanos)))
        if let stall = stallSummary {
            fields.append((
                "stall_probe",
                "{\"p50_us\": \(number(Double(stall.p50) / 1000)), \"p99_us\": \(number(Double(stall.p99) / 1000)), "
                    + "\"max_us\": \(number(Double(stall.max) / 1000)), \"slow_fraction\": \(formatDecimal(stall.slowFraction, places: 5))}"))
        } else {
            fields.append(("stall_probe", "null"))
        }
        if let clean = latencyOutsideStalls {
            fields.append((
                "latency_outside_stalls_ms",
                "{\"p50\": \(ms(clean.quantile(0.5))), \"p90\": \(ms(clean.quantile(0.9))), \"p99\": \(ms(clean.quantile(0.99))), "
                    + "\"p999\": \(ms(clean.quantile(0.999))), \"samples\": \(clean.total), \"in_stalls\": \(rpcsInStalls)}"))
        } else {
            fields.append(("latency_outside_stalls_ms", "null"))
        }
        if let provider = providerLatency, let mean = provider.mean {
            func ms(_ seconds: Double?) -> String { seconds.map { formatDecimal($0 * 1000, places: 4) } ?? "null" }
            fields.append((
                "provider_request_ms",
                "{\"mean\": \(ms(mean)), \"p50\": \(ms(provider.quantile(0.5))), \"p90\": \(ms(provider.quantile(0.9))), "
                    + "\"p99\": \(ms(provider.quantile(0.99))), \"requests\": \(Int(provider.count))}"))
        } else {
            fields.append(("provider_request_ms", "null"))
        }
        fields.append(("unfinished", "\(report.unfinished)"))
        fields.append(("drain_timed_out", outcome.drainTimedOut ? "true" : "false"))
        fields.append((
            "gateway",
            "{\"rss_idle_kib\": \(int(rssIdleKiB)), \"rss_after_warmup_kib\": \(int(rssAfterWarmupKiB)), "
                + "\"rss_end_kib\": \(int(rssEndKiB)), \"rss_peak_kib\": \(int(rssPeakKiB)), "
                + "\"cpu_percent\": \(number(gatewayCPU)), \"threads\": \(int(gatewayThreads)), "
                + "\"exit_status\": \(gatewayExit.map { "\($0)" } ?? "null")}"
        ))
        fields.append(("mock", "{\"cpu_percent\": \(number(mockCPU)), \"requests\": \(int(mockRequests))}"))
        fields.append(("client_cpu_percent", number(clientCPU)))
        return "{" + fields.map { "\(jsonString($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }
}
