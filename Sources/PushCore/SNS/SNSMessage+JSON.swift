// `message_structure: "json"`: the object of platform keys.
extension SNSMessage {
    /// Parses a JSON message object and checks the keys `target` needs.
    ///
    /// Stricter than SNS on purpose: SNS silently ignores a known key whose value is not a string,
    /// so a caller who forgot to encode the APNs payload as a string gets the `default` text on
    /// iPhones and never learns why. Here any known key with a non-string value fails the whole
    /// publish, as the issue asks. Unknown keys are still ignored, whatever their value.
    static func parseJSON(_ message: String, target: SNSTarget) throws(ValidationError) -> SNSMessage {
        let document: JSONValue
        do throws(JSONError) {
            document = try JSONParser.parse(message.utf8)
        } catch {
            throw ValidationError(field: "message", message: "not valid JSON: \(error)")
        }
        guard let members = document.objectMembers else {
            throw ValidationError(field: "message", message: "must be a JSON object when message_structure is \"json\"")
        }
        var result = SNSMessage(defaultText: nil)
        // The parser rejects duplicate keys, so each known key is seen at most once.
        for (key, value) in members where knownKeys.contains(key) {
            guard case .string(let text) = value else {
                throw ValidationError(
                    field: "message",
                    message:
                        "the value of '\(key)' must be a JSON string (platform payloads are JSON encoded as a string)")
            }
            // The FCM and ADM payloads are parsed only when a fan-out builds them; checking
            // their shape here fails a bad publish at once instead of silently at every Android
            // or Fire endpoint later.
            if key == PlatformKey.gcm.rawValue { _ = try SNSFCMPayload.parseGCM(text) }
            if key == PlatformKey.adm.rawValue { _ = try SNSADMPayload.parseADM(text) }
            if key == PlatformKey.webpush.rawValue { try SNSWebPushPayload.checkWebPush(text) }
            if key == "default" { result.defaultText = text } else { result.platformTexts[key] = text }
        }
        try result.checkRequiredKeys(for: target)
        return result
    }

    /// A topic needs `default`; a direct endpoint publish is fine with its own platform key instead.
    func checkRequiredKeys(for target: SNSTarget) throws(ValidationError) {
        guard defaultText == nil else { return }
        switch target {
        case .topic:
            throw ValidationError(field: "message", message: "JSON must contain an entry for 'default'")
        case .endpoint(let key):
            guard platformTexts[key.rawValue] == nil else { return }
            throw ValidationError(
                field: "message", message: "JSON must contain an entry for 'default' or '\(key.rawValue)'")
        }
    }
}
