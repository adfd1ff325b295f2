import PushCore

#if canImport(Glibc)
    import Glibc
#endif

/// How much `pushgate` logs.
public enum LogLevel: Int, Sendable, Comparable {
    case debug, info, warning, error

    init(parsing text: String, path: String) throws(ConfigurationError) {
        switch text {
        case "debug": self = .debug
        case "info": self = .info
        case "warning": self = .warning
        case "error": self = .error
        default: throw ConfigurationError("\(path): must be debug, info, warning or error")
        }
    }

    var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Structured log lines (logfmt) on standard error, one `write` per line so lines from different
/// threads never interleave. Callers never pass secrets: keys and tokens are not logged.
public struct Log: Sendable {
    public let level: LogLevel

    public init(level: LogLevel) { self.level = level }

    public func debug(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.debug, message, fields)
    }

    public func info(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.info, message, fields)
    }

    public func warning(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.warning, message, fields)
    }

    public func error(_ message: String, _ fields: KeyValuePairs<String, String> = [:]) {
        write(.error, message, fields)
    }

    private func write(_ at: LogLevel, _ message: String, _ fields: KeyValuePairs<String, String>) {
        guard at >= level else { return }
        var line =
            "ts=\(Self.timestamp()) level=\(at.name) msg=\(Self.quoted(TextCap.prefix(message, maxBytes: Self.maxValueBytes)))"
        for (key, value) in fields {
            line += " \(key)=\(Self.quoted(TextCap.prefix(value, maxBytes: Self.maxValueBytes)))"
        }
        line += "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }

    /// The longest message or field value a line carries (longer ones end in …): a value that
    /// echoes a client's input must not make a line as long as that input.
    static let maxValueBytes = 2048

    /// logfmt quoting: bare when safe, else double-quoted with escapes.
    static func quoted(_ value: String) -> String {
        let safe =
            !value.isEmpty
            && value.utf8.allSatisfy { $0 > 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "=") && $0 < 0x7f }
        if safe { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + "\(pad(Int32(now.tv_nsec / 1_000_000), 3))Z"
    }
}

func systemCoreCount() -> Int {
    Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
