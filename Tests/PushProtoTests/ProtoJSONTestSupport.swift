import PushCore
import PushProto
import Testing

/// Decodes `text` as the proto3 JSON of `M`.
func decodeJSON<M: ProtoJSONMessage>(_ type: M.Type, _ text: String) throws(ProtoJSONError) -> M {
    try M(jsonBytes: Array(text.utf8))
}

/// The error that decoding `text` as `M` throws, or nil when it decodes.
func jsonError<M: ProtoJSONMessage>(_ type: M.Type, _ text: String) -> ProtoJSONError? {
    do throws(ProtoJSONError) {
        _ = try decodeJSON(type, text)
        return nil
    } catch {
        return error
    }
}

/// `value` with every object's members sorted by key: JSON objects are unordered, so two
/// encoders' outputs are compared in this form.
func canonicalJSON(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements): .array(elements.map(canonicalJSON))
    case .object(let members): .object(members.map { ($0.0, canonicalJSON($0.1)) }.sorted { $0.0 < $1.0 })
    default: value
    }
}

/// The JSON text parsed and canonicalized, for comparing documents by meaning.
func canonicalJSON(_ text: some Collection<UInt8>) throws -> JSONValue {
    canonicalJSON(try JSONParser.parse(text))
}
