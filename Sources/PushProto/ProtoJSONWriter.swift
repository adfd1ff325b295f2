internal import PushCore

/// Writes a message's JSON object field by field, leaving out what proto3 leaves out: scalars
/// and enums at their default, empty repeated and map fields, absent messages and optionals.
struct ProtoJSONWriter: ~Copyable {
    var json = JSONWriter()

    mutating func beginMessage() { json.beginObject() }
    mutating func endMessage() { json.endObject() }

    /// A scalar or enum field without presence: written unless it holds the default.
    mutating func field(_ name: String, _ value: some ProtoJSONScalar) {
        guard !value.isProtoJSONDefault else { return }
        json.key(name)
        value.writeProtoJSON(to: &self)
    }

    /// A field with presence (a message, or a one-field `oneof`): written when set, even at the default.
    mutating func field(_ name: String, present value: (some ProtoJSONCodable)?) {
        guard let value else { return }
        json.key(name)
        value.writeProtoJSON(to: &self)
    }

    mutating func field(_ name: String, repeated values: [some ProtoJSONCodable]) {
        guard !values.isEmpty else { return }
        json.key(name)
        json.beginArray()
        for value in values { value.writeProtoJSON(to: &self) }
        json.endArray()
    }

    /// A `map<string, V>` field, keys in sorted order so that the output is deterministic.
    mutating func field(_ name: String, map: [String: some ProtoJSONCodable]) {
        guard !map.isEmpty else { return }
        json.key(name)
        json.beginObject()
        for (key, value) in map.sorted(by: { $0.key < $1.key }) {
            json.key(key)
            value.writeProtoJSON(to: &self)
        }
        json.endObject()
    }
}
