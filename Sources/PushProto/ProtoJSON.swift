internal import PushCore

/// The entry points of the generated `init(jsonBytes:)` and `jsonBytes()`, and the readers of
/// repeated and map fields.
enum ProtoJSON {
    static func decode<Message: ProtoJSONCodable>(_ bytes: some Collection<UInt8>) throws(ProtoJSONError) -> Message {
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONParser.parse(bytes)
        } catch {
            throw ProtoJSONError(error)
        }
        return try Message(protoJSON: json)
    }

    static func encode(_ message: some ProtoJSONCodable) -> [UInt8] {
        var writer = ProtoJSONWriter()
        message.writeProtoJSON(to: &writer)
        return writer.json.bytes
    }

    /// A repeated field: an array whose elements are not null (`null` for the whole field is
    /// handled before, as the empty list).
    static func array<Element: ProtoJSONCodable>(
        _ json: JSONValue, of: Element.Type
    ) throws(ProtoJSONError) -> [Element] {
        guard case .array(let elements) = json else { throw .expected("an array", got: json) }
        var values: [Element] = []
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do throws(ProtoJSONError) {
                values.append(try Element(protoJSON: element))
            } catch {
                throw error.atIndex(index)
            }
        }
        return values
    }

    /// A `map<string, V>` field: an object whose values are not null.
    static func map<Value: ProtoJSONCodable>(
        _ json: JSONValue, of: Value.Type
    ) throws(ProtoJSONError) -> [String: Value] {
        guard case .object(let members) = json else { throw .expected("an object", got: json) }
        var map: [String: Value] = [:]
        map.reserveCapacity(members.count)
        for (key, member) in members {
            do throws(ProtoJSONError) {
                map[key] = try Value(protoJSON: member)
            } catch {
                throw error.atKey(key)
            }
        }
        return map
    }
}
