internal import PushCore

/// A protobuf message with the proto3 JSON mapping (protobuf.dev "ProtoJSON Format"), generated for
/// every message by `scripts/gen-swift-proto.py`: lowerCamelCase names out, either name in,
/// 64-bit integers as strings, enums by name, bytes as base64, unknown fields refused.
public protocol ProtoJSONMessage: ProtoMessage {
    /// Decodes the proto3 JSON form of the message (UTF-8).
    /// - Throws: ``ProtoJSONError`` naming the field path and what was expected.
    init(jsonBytes: some Collection<UInt8>) throws(ProtoJSONError)

    /// Encodes the message as compact proto3 JSON, leaving out fields that hold their default.
    func jsonBytes() -> [UInt8]
}

/// A value with a proto3 JSON form: a message, an enum or a scalar. The generated code of a
/// message reads and writes each field through this.
protocol ProtoJSONCodable {
    /// Reads the value from its JSON form; a message's errors carry their field path.
    init(protoJSON json: JSONValue) throws(ProtoJSONError)
    /// Writes the value's JSON form as one JSON value.
    func writeProtoJSON(to writer: inout ProtoJSONWriter)
}

/// A scalar or enum: a field of one that holds the default is left out of the JSON (proto3).
protocol ProtoJSONScalar: ProtoJSONCodable {
    var isProtoJSONDefault: Bool { get }
}
