internal import PushCore

// The proto3 JSON forms of the scalar types. The Swift type stands for every proto type with the
// same JSON form: Int32 for int32, sint32 and sfixed32; UInt64 for uint64 and fixed64; and so on.

extension String: ProtoJSONScalar {
    init(protoJSON json: JSONValue) throws(ProtoJSONError) {
        guard case .string(let text) = json else { throw .expected("a string", got: json) }
        self = text
    }
    func writeProtoJSON(to writer: inout ProtoJSONWriter) { writer.json.string(self) }
    var isProtoJSONDefault: Bool { isEmpty }
}

extension Bool: ProtoJSONScalar {
    init(protoJSON json: JSONValue) throws(ProtoJSONError) {
        guard case .bool(let flag) = json else { throw .expected("true or false", got: json) }
        self = flag
    }
    func writeProtoJSON(to writer: inout ProtoJSONWriter) { writer.json.bool(self) }
    var isProtoJSONDefault: Bool { !self }
}

/// bytes: base64 in a JSON string.
extension [UInt8]: ProtoJSONCodable, ProtoJSONScalar {
    init(protoJSON json: JSONValue) throws(ProtoJSONError) {
        guard case .string(let text) = json else { throw .expected("a base64 string", got: json) }
        switch ProtoJSONBase64.decode(text) {
        case .success(let bytes): self = bytes
        case .failure(let failure):
            throw ProtoJSONError(message: "invalid base64: \(failure.reason) at character \(failure.offset)")
        }
    }
    func writeProtoJSON(to writer: inout ProtoJSONWriter) { writer.json.string(ProtoJSONBase64.encode(self)) }
    var isProtoJSONDefault: Bool { isEmpty }
}

/// The integer types: a JSON number, or a string holding one (proto3 JSON accepts both for every
/// integer type, exponents and zero fractions included). 32-bit types are written as numbers,
/// 64-bit types as strings, since JavaScript's numbers cannot hold every 64-bit value.
protocol ProtoJSONInteger: ProtoJSONScalar, FixedWidthInteger {
    /// The proto type's name, for error messages.
    static var protoTypeName: String { get }
}

extension ProtoJSONInteger {
    init(protoJSON json: JSONValue) throws(ProtoJSONError) {
        let text: String
        let shown: String
        switch json {
        case .number(let number):
            text = number
            shown = TextCap.prefix(number, maxBytes: 40)
        case .string(let string):
            text = string
            shown = TextCap.quoted(string, maxCharacters: 40)
        default: throw .expected("\(Self.protoTypeName) (a number or a string of digits)", got: json)
        }
        guard let decimal = ProtoJSONDecimal(text) else {
            throw ProtoJSONError(message: "expected \(Self.protoTypeName), got \(shown), which is not a number")
        }
        switch decimal.integer(as: Self.self) {
        case .success(let value): self = value
        case .failure(.notAnInteger):
            throw ProtoJSONError(message: "expected \(Self.protoTypeName), got \(shown), which is not a whole number")
        case .failure(.outOfRange):
            throw ProtoJSONError(message: "\(shown) is out of range for \(Self.protoTypeName)")
        }
    }

    var isProtoJSONDefault: Bool { self == 0 }
}

extension Int32: ProtoJSONInteger {
    static var protoTypeName: String { "int32" }
    func writeProtoJSON(to writer: inout ProtoJSONWriter) { writer.json.int(self) }
}

extension UInt32: ProtoJSONInteger {
    static var protoTypeName: String { "uint32" }
    func writeProtoJSON(to writer: inout ProtoJSONWriter) { writer.json.int(self) }
}

extension Int64: ProtoJSONInteger {
    static var protoTypeName: String { "int64" }
    func writeProtoJSON(to writer: inout ProtoJSONWriter) { writer.json.string(String(self)) }
}

extension UInt64: ProtoJSONInteger {
    static var protoTypeName: String { "uint64" }
    func writeProtoJSON(to writer: inout ProtoJSONWriter) { writer.json.string(String(self)) }
}

/// float and double: a JSON number, or a string holding one or "NaN", "Infinity", "-Infinity"
/// (which are also how those three are written).
protocol ProtoJSONFloatingPoint: ProtoJSONScalar, BinaryFloatingPoint, LosslessStringConvertible {
    static var protoTypeName: String { get }
}

extension ProtoJSONFloatingPoint {
    init(protoJSON json: JSONValue) throws(ProtoJSONError) {
        switch json {
        case .string("NaN"): self = .nan
        case .string("Infinity"): self = .infinity
        case .string("-Infinity"): self = -.infinity
        case .number(let text), .string(let text):
            let shown =
                json == .number(text) ? TextCap.prefix(text, maxBytes: 40) : TextCap.quoted(text, maxCharacters: 40)
            guard ProtoJSONDecimal(text) != nil else {
                throw ProtoJSONError(message: "expected \(Self.protoTypeName), got \(shown), which is not a number")
            }
            let value = Self(text) ?? .infinity
            guard value.isFinite else {
                throw ProtoJSONError(message: "\(shown) is out of range for \(Self.protoTypeName)")
            }
            self = value
        default:
            throw .expected("\(Self.protoTypeName) (a number, \"NaN\", \"Infinity\" or \"-Infinity\")", got: json)
        }
    }

    func writeProtoJSON(to writer: inout ProtoJSONWriter) {
        if isNaN {
            writer.json.string("NaN")
        } else if isInfinite {
            writer.json.string(self < 0 ? "-Infinity" : "Infinity")
        } else {
            // Swift's shortest round-tripping form ("1.5", "1e-07") is valid JSON number text.
            writer.json.raw(description)
        }
    }

    /// Negative zero is not the default: binary protobuf keeps it too.
    var isProtoJSONDefault: Bool { self == 0 && sign == .plus }
}

extension Float: ProtoJSONFloatingPoint {
    static var protoTypeName: String { "float" }
}

extension Double: ProtoJSONFloatingPoint {
    static var protoTypeName: String { "double" }
}
