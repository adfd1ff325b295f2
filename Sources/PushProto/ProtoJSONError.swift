internal import PushCore

/// A JSON document that is not the proto3 JSON form of the message expected, and where.
public struct ProtoJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is, as the document spells it: `notifications[0].tokenz`,
    /// `attributes["AWS.SNS.MOBILE.APNS.TTL"]`; empty for the document itself.
    public var path: String
    /// What is wrong, e.g. `unknown field` or `expected a string, got a number`.
    public var message: String

    public init(path: String = "", message: String) {
        self.path = path
        self.message = message
    }

    /// `notifications[0].tokenz: unknown field`.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }

    /// A document that is not JSON at all (RFC 8259, duplicate keys refused, nesting limited).
    /// Shortened: the parser's message may quote a key of any length.
    init(_ error: JSONError) {
        self.init(message: "invalid JSON: " + TextCap.prefix(error.description, maxBytes: 256))
    }

    /// `expected a string, got a number`.
    static func expected(_ what: String, got value: JSONValue) -> Self {
        Self(message: "expected \(what), got \(value.protoJSONKind)")
    }

    /// This error seen from the message that holds field `name` (the key as the document wrote it).
    func inField(_ name: String) -> Self { prefixed(TextCap.prefix(name, maxBytes: 128)) }

    /// This error seen from the array that holds it at `index`.
    func atIndex(_ index: Int) -> Self { prefixed("[\(index)]") }

    /// This error seen from the map that holds it at `key`, quoted: map keys may contain dots.
    func atKey(_ key: String) -> Self {
        var quoted: [UInt8] = []
        JSONWriter.appendQuoted(TextCap.prefix(key, maxBytes: 128), to: &quoted)
        return prefixed("[" + String(decoding: quoted, as: UTF8.self) + "]")
    }

    private func prefixed(_ component: String) -> Self {
        var copy = self
        if path.isEmpty || path.hasPrefix("[") {
            copy.path = component + path
        } else {
            copy.path = component + "." + path
        }
        return copy
    }
}

extension JSONValue {
    /// The kind of value, as an error message names it.
    var protoJSONKind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
