internal import PushCore

/// The fields of one message as its JSON object names them, and the reading of such an object:
/// each member is matched to a field by its lowerCamelCase (`json_name`) or its proto name.
struct ProtoJSONFields: Sendable {
    struct Field: Sendable {
        let number: Int32
        let jsonName: String
        let protoName: String
    }

    /// The full proto name of the message, for an error about the object itself.
    let messageName: String
    private let fields: [Field]
    /// Either name of a field → its index in `fields`.
    private let indexByName: [String: Int]
    /// Whether some field's two names differ, so that an object could give it twice.
    private let hasTwoNames: Bool

    /// - Parameter fields: (number, json_name, proto name) of every field, in declaration order.
    init(_ messageName: String, _ fields: [(Int32, String, String)]) {
        self.messageName = messageName
        self.fields = fields.map { Field(number: $0.0, jsonName: $0.1, protoName: $0.2) }
        var indexByName: [String: Int] = [:]
        for (index, field) in self.fields.enumerated() {
            indexByName[field.jsonName] = index
            indexByName[field.protoName] = index
        }
        self.indexByName = indexByName
        hasTwoNames = self.fields.contains { $0.jsonName != $0.protoName }
    }

    /// Calls `body` with the field number and value of every member of `json` that is not `null`
    /// (`null` leaves a field unset). Refuses a member that names no field. A field given under
    /// both its names keeps the last one, as ProtoJSON says duplicates do; an error from `body`
    /// gets the member's key in front of its path.
    func read(
        _ json: JSONValue, _ body: (Int32, JSONValue) throws(ProtoJSONError) -> Void
    ) throws(ProtoJSONError) {
        guard case .object(let members) = json else {
            throw ProtoJSONError.expected("an object (\(messageName))", got: json)
        }
        var indices: [Int] = []
        indices.reserveCapacity(members.count)
        // The parser refuses repeated keys, so a field can only come twice under its two names.
        var lastPosition: [Int] = hasTwoNames ? Array(repeating: -1, count: fields.count) : []
        for (position, (key, _)) in members.enumerated() {
            guard let index = indexByName[key] else {
                throw ProtoJSONError(message: "unknown field").inField(key)
            }
            indices.append(index)
            if hasTwoNames { lastPosition[index] = position }
        }
        for (position, (key, value)) in members.enumerated() {
            let index = indices[position]
            if hasTwoNames && lastPosition[index] != position { continue }
            if case .null = value { continue }
            do throws(ProtoJSONError) {
                try body(fields[index].number, value)
            } catch {
                throw error.inField(key)
            }
        }
    }
}
