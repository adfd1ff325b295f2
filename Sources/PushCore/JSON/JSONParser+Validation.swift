// Parsing a caller's JSON text that must be an object, with failures as request errors.
extension JSONParser {
    /// Parses `text`, which must hold a JSON object, and returns its members in order.
    ///
    /// - Parameters:
    ///   - field: the text's place in the request (`message.GCM`, `payload_json`), the error's field.
    ///   - expected: what the object is, appended to "must be a JSON object" (` (legacy FCM …)`).
    /// - Throws: ``ValidationError`` naming `field`: "is not valid JSON: …" or "must be a JSON object…".
    static func parseObject(_ text: String, field: String, expected: String = "") throws(ValidationError)
        -> [(String, JSONValue)]
    {
        let document: JSONValue
        do throws(JSONError) {
            document = try parse(text.utf8)
        } catch {
            throw ValidationError(field: field, message: "is not valid JSON: \(error)")
        }
        guard let members = document.objectMembers else {
            throw ValidationError(field: field, message: "must be a JSON object" + expected)
        }
        return members
    }
}
