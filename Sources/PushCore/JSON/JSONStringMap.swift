/// A JSON object whose values must all be strings: the `data` of FCM and ADM messages, FCM's
/// header maps, and a notification's `data_json` bound for either provider.
///
/// One checker, so every such map fails the same way: the object, or the member at fault
/// (`payload_json.data.count`).
enum JSONStringMap {
    /// A further rule for each key (FCM's reserved data keys); throws naming `field`.
    typealias KeyRule = (_ key: String, _ field: String) throws(ValidationError) -> Void

    /// Checks that `value` is an object of strings and returns its members in order.
    ///
    /// - Parameters:
    ///   - field: the map's place (`payload_json.data`); a member's error names `<field>.<key>`.
    ///   - why: appended to "must be a JSON string" for a member of another type, e.g.
    ///     ` (FCM data values are strings)`.
    ///   - keyRule: checked for every key before its value.
    static func members(
        of value: JSONValue, field: String, why: String = "", keyRule: KeyRule = { _, _ in }
    ) throws(ValidationError) -> [(String, String)] {
        guard let members = value.objectMembers else {
            throw ValidationError(field: field, message: "must be a JSON object of strings")
        }
        var strings: [(String, String)] = []
        strings.reserveCapacity(members.count)
        for (key, member) in members {
            try keyRule(key, "\(field).\(key)")
            guard case .string(let text) = member else {
                throw ValidationError(field: "\(field).\(key)", message: "must be a JSON string" + why)
            }
            strings.append((key, text))
        }
        return strings
    }

    /// Parses `text`, a request's `data_json`, and checks it as ``members(of:field:why:keyRule:)``
    /// does; an empty text is an empty map.
    static func members(
        ofJSON text: String, field: String, why: String = "", keyRule: KeyRule = { _, _ in }
    ) throws(ValidationError) -> [(String, String)] {
        guard !text.isEmpty else { return [] }
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONParser.parse(text.utf8)
        } catch {
            throw ValidationError(field: field, message: error.description)
        }
        return try members(of: value, field: field, why: why, keyRule: keyRule)
    }
}
