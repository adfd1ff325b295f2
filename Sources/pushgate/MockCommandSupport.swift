import PushCommandLine
import PushCore
import PushMockSupport

#if canImport(Glibc)
    import Glibc
#endif

// What the mock commands share: flag parsing helpers, token lists, writing
// files and waiting for SIGINT/SIGTERM.

enum MockCommandSupport {
    /// `HOST:PORT` (`[v6]:PORT` too; an empty host means all interfaces).
    static func listenAddress(_ value: String, example: String) throws -> (host: String, port: Int) {
        guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw CommandLineError("--listen: expected HOST:PORT, e.g. \(example)") }
        var host = String(value[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "0.0.0.0" : host, port)
    }

    /// A share between 0 and 1.
    static func share(_ flags: inout FlagReader, _ flag: String) throws -> Double {
        let text = try flags.value(for: flag)
        guard let value = Double(text), value >= 0, value <= 1 else {
            throw CommandLineError("\(flag): must be a share between 0 and 1, e.g. 0.1")
        }
        return value
    }

    /// Non-empty lines, trimmed; '#' starts a comment line.
    static func tokens(in path: String) throws -> [String] {
        let text = String(decoding: try readFile(path), as: UTF8.self)
        return text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingPrefix(while: \.isWhitespace) }
            .map { String($0.reversed().trimmingPrefix(while: \.isWhitespace).reversed()) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// Blocks SIGINT and SIGTERM in this thread (and the threads it starts later), so only
    /// ``waitForStop(_:statsInterval:onInterval:)`` receives them. Call before any loop starts.
    static func blockStopSignals() -> sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        return signals
    }

    /// Waits for SIGINT or SIGTERM, calling `onInterval` every `statsInterval` seconds meanwhile;
    /// returns the signal's name.
    static func waitForStop(_ signals: sigset_t, statsInterval: Int?, onInterval: () -> Void) -> String {
        var signals = signals
        while true {
            var received: Int32 = 0
            if let interval = statsInterval {
                var timeout = timespec(tv_sec: interval, tv_nsec: 0)
                received = sigtimedwait(&signals, nil, &timeout)
                if received < 0 {
                    if errno == EAGAIN { onInterval() }
                    continue
                }
            } else {
                guard sigwait(&signals, &received) == 0 else { continue }
            }
            return received == SIGINT ? "SIGINT" : "SIGTERM"
        }
    }
}

extension MockCommandSupport {
    /// Writes `{"name": n, …, "object": {"key": n, …}, …}` (keys of each object sorted), then the
    /// `raw` members (JSON as given), to `path.tmp`, then renames it over `path`, so a reader never
    /// sees half a file. A failure is logged, not fatal.
    static func writeStatsJSON(
        to path: String, tool: String, numbers: [(String, Int)], objects: [(String, [(String, Int)])],
        raw: [(String, [UInt8])] = []
    ) {
        var out: [UInt8] = [UInt8(ascii: "{")]
        func pair(_ key: String, _ value: Int, first: Bool) {
            if !first { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendQuoted(key, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.appendDecimal(value, to: &out)
        }
        for (index, (key, value)) in numbers.enumerated() { pair(key, value, first: index == 0) }
        for (name, pairs) in objects {
            out.append(UInt8(ascii: ","))
            JSONWriter.appendQuoted(name, to: &out)
            out.append(contentsOf: Array(":{".utf8))
            for (index, (key, value)) in pairs.sorted(by: { $0.0 < $1.0 }).enumerated() {
                pair(key, value, first: index == 0)
            }
            out.append(UInt8(ascii: "}"))
        }
        for (name, json) in raw {
            out.append(UInt8(ascii: ","))
            JSONWriter.appendQuoted(name, to: &out)
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: json)
        }
        out.append(contentsOf: Array("}\n".utf8))
        do {
            try writeFile(path + ".tmp", out)
            guard rename(path + ".tmp", path) == 0 else {
                throw CommandLineError("\(path): \(String(cString: strerror(errno)))")
            }
        } catch {
            printError("\(tool): cannot write the stats file: \(error)")
        }
    }
}

extension MockCommandSupport {
    /// The stats file of a request/response mock (mock-fcm, mock-adm): the connection and answer
    /// counters they share, then the mock's own `numbers` and `objects`.
    static func writeStatsJSON(
        to path: String, tool: String, counters: MockServerCounters, numbers: [(String, Int)],
        objects: [(String, [(String, Int)])], raw: [(String, [UInt8])] = []
    ) {
        writeStatsJSON(
            to: path, tool: tool,
            numbers: [
                ("requests", counters.requests), ("streams_opened", counters.streamsOpened),
                ("streams_cancelled", counters.streamsCancelled), ("connections_opened", counters.connectionsOpened),
                ("connections_closed", counters.connectionsClosed), ("handshake_failures", counters.handshakeFailures),
                ("goaways_sent", counters.goAwaysSent), ("max_in_flight", counters.maxInFlight),
            ] + numbers,
            objects: [
                ("by_status", counters.byStatus.map { (String($0.key), $0.value) }),
                ("by_error", counters.byError.map { ($0.key, $0.value) }),
            ] + objects, raw: raw)
    }
}

/// Writes `bytes` to `path` (created or truncated) with plain POSIX calls.
func writeFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
    guard fd >= 0 else { throw CommandLineError("\(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    // open's mode applies only to a file it creates: one written over keeps its own, and a
    // private key written over a 0644 file would stay readable by all. So before a byte is
    // written the file loses what `mode` does not allow (it never gains: a 0600 file stays so).
    var info = stat()
    guard fstat(fd, &info) == 0, fchmod(fd, info.st_mode & mode & 0o7777) == 0 else {
        throw CommandLineError("\(path): \(String(cString: strerror(errno)))")
    }
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            throw CommandLineError("\(path): \(String(cString: strerror(errno)))")
        }
        offset += written
    }
}
