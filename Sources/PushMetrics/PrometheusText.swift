/// The pieces of the Prometheus text exposition format 0.0.4: names, escaping, numbers, lines.
public enum PrometheusText {
    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    public static func isValidMetricName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) || first == UInt8(ascii: "_") || first == UInt8(ascii: ":")
        else { return false }
        return name.utf8.allSatisfy {
            isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ":")
        }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved).
    public static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isLetter(first) || first == UInt8(ascii: "_"), !name.hasPrefix("__")
        else { return false }
        return name.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// A label value between double quotes: backslash, double quote and line feed escaped.
    public static func escapeLabelValue(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else { return value }
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count + 8)
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// `# HELP` text: backslash and line feed escaped.
    public static func escapeHelp(_ help: String) -> String {
        guard help.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A }) else { return help }
        var escaped = ""
        for character in help.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// `a="x",b="y"` (no braces).
    public static func labels(_ names: [String], _ values: [String]) -> String {
        zip(names, values).map { "\($0)=\"\(escapeLabelValue($1))\"" }.joined(separator: ",")
    }

    /// A sample value: `+Inf`, `-Inf`, `NaN`, an integer without `.0`, else the shortest form that
    /// reads back as the same Double (`0.005`, `1e-05`).
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "+Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    static func header(name: String, help: String, type: String, into text: inout String) {
        text += "# HELP "
        text += name
        text += " "
        text += escapeHelp(help)
        text += "\n# TYPE "
        text += name
        text += " "
        text += type
        text += "\n"
    }

    static func sample(_ name: String, labels: String, value: Int, into text: inout String) {
        line(name, labels: labels, value: String(value), into: &text)
    }

    static func sample(_ name: String, labels: String, value: Double, into text: inout String) {
        line(name, labels: labels, value: number(value), into: &text)
    }

    private static func line(_ name: String, labels: String, value: String, into text: inout String) {
        text += name
        if !labels.isEmpty {
            text += "{"
            text += labels
            text += "}"
        }
        text += " "
        text += value
        text += "\n"
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
