/// A command-line mistake; the message names the flag.
public struct CommandLineError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Reads `--flag value` and `--flag=value` pairs in order.
public struct FlagReader {
    private var arguments: ArraySlice<String>
    private var pendingValue: String?

    public init(_ arguments: [String]) { self.arguments = arguments[...] }

    public mutating func next() -> String? {
        guard let argument = arguments.popFirst() else { return nil }
        if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
            pendingValue = String(argument[argument.index(after: equals)...])
            return String(argument[..<equals])
        }
        pendingValue = nil
        return argument
    }

    public mutating func value(for flag: String) throws -> String {
        if let pendingValue {
            self.pendingValue = nil
            return pendingValue
        }
        guard let value = arguments.first else { throw CommandLineError("\(flag): needs a value") }
        // `--config --listen x` is a forgotten value, not a config file named "--listen".
        if value.hasPrefix("--"), value.count > 2 {
            throw CommandLineError(
                "\(flag): needs a value, not the flag \(value) (write \(flag)=VALUE for a value that starts with --)")
        }
        arguments.removeFirst()
        return value
    }

    /// A `HOST:PORT` value (`[v6]:PORT` too) with a port from 1 to 65535.
    public mutating func hostPort(for flag: String, example: String) throws -> (host: String, port: Int) {
        let value = try value(for: flag)
        guard let colon = value.lastIndex(of: ":"), let port = Int(value[value.index(after: colon)...]),
            (1...65535).contains(port)
        else { throw CommandLineError("\(flag): expected HOST:PORT, e.g. \(example)") }
        return (String(value[..<colon]).trimmingBrackets, port)
    }

    public mutating func int(for flag: String, range: ClosedRange<Int>) throws -> Int {
        let text = try value(for: flag)
        guard let number = Int(text), range.contains(number) else {
            throw CommandLineError("\(flag): must be an integer between \(range.lowerBound) and \(range.upperBound)")
        }
        return number
    }
}

extension String {
    /// `[::1]` → `::1`: the host of a `[v6]:PORT` address.
    public var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
