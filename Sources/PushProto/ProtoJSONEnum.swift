internal import PushCore

/// A generated open enum in proto3 JSON: written by value name, or as its number when the value is
/// unknown to this build; read from either.
protocol ProtoJSONEnum: ProtoJSONScalar {
    init(rawValue: Int32)
    var rawValue: Int32 { get }
    /// The full proto name of the enum, for error messages.
    static var protoName: String { get }
    /// Every value's proto name and number, in declaration order.
    static var protoValues: [(name: String, number: Int32)] { get }
}

extension ProtoJSONEnum {
    init(protoJSON json: JSONValue) throws(ProtoJSONError) {
        switch json {
        case .string(let name):
            if let value = Self.protoValues.first(where: { $0.name == name }) {
                self.init(rawValue: value.number)
            } else if ProtoJSONDecimal(name) != nil {
                // A number in a string, as json_format also reads it (no value name starts with a digit).
                try self.init(protoJSON: .number(name))
            } else {
                let shown = TextCap.quoted(name, maxCharacters: 64)
                throw ProtoJSONError(message: "\(shown) is not a value of \(Self.protoName)")
            }
        case .number:
            do throws(ProtoJSONError) {
                self.init(rawValue: try Int32(protoJSON: json))
            } catch {
                throw ProtoJSONError(message: "\(error.message) (an enum number of \(Self.protoName))")
            }
        default:
            throw .expected("a value name or number of \(Self.protoName)", got: json)
        }
    }

    func writeProtoJSON(to writer: inout ProtoJSONWriter) {
        if let value = Self.protoValues.first(where: { $0.number == rawValue }) {
            writer.json.string(value.name)
        } else {
            writer.json.int(rawValue)
        }
    }

    var isProtoJSONDefault: Bool { rawValue == 0 }
}
