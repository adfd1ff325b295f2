/// The FCM HTTP v1 rules every `message` must meet, however it was made (built from a
/// notification's fields, given as `payload_json`, or from an SNS `GCM` value), plus the
/// request-body framing shared by all of them.
///
/// Only rules FCM states (docs/providers.md B.2, B.4) are checked, so that a mistake fails once, here,
/// instead of once per token at FCM.
public enum FCMMessageRules {
    /// FCM's limit for a message to a token, in bytes (docs/providers.md B.4). Checked, as the mock FCM checks it, on
    /// the whole request body minus the token: `bodyPrefix.count + bodySuffix.count`.
    public static let maxBodyBytes = 4096

    /// The keys that name a message's target. The gateway sets `token` itself, one per device, so
    /// a caller-made message must carry none of them.
    public static let targetKeys: [String] = ["token", "topic", "condition", "fid"]

    /// The exact `data` keys refused (docs/providers.md B.2 lists `from` and `message_type`;
    /// `notification` is refused here as a precaution, not because FCM documents it).
    static let reservedDataKeys: Set<String> = ["from", "notification", "message_type"]

    /// The values `android.priority` takes; the API accepts the lowercase spelling too (docs/providers.md B.2).
    static let androidPriorities: Set<String> = ["NORMAL", "HIGH", "normal", "high"]

    /// True for a `data` key FCM refuses: `from`, `notification`, `message_type`, or one starting
    /// with `google` or `gcm` (FCM's older wording, "any word starting with google or gcm"; the
    /// current reference narrows it to `google.` and `gcm.notification.`: this stays the wider).
    public static func isReservedDataKey(_ key: String) -> Bool {
        reservedDataKeys.contains(key) || key.hasPrefix("google") || key.hasPrefix("gcm")
    }

    /// Checks one `data` key; `field` names it (`data_json.from`).
    static func checkDataKey(_ key: String, field: String) throws(ValidationError) {
        guard !isReservedDataKey(key) else {
            throw ValidationError(
                field: field,
                message: "is a reserved FCM data key (from, notification, message_type, google*, gcm*)")
        }
    }

    /// Checks a `data` map: an object whose values are all strings and whose keys are allowed.
    ///
    /// - Parameter field: the map's place, e.g. `payload_json.data`; a member's error names
    ///   `<field>.<key>`.
    static func checkData(_ value: JSONValue, field: String) throws(ValidationError) {
        _ = try JSONStringMap.members(
            of: value, field: field, why: " (FCM data values are strings)", keyRule: checkDataKey(_:field:))
    }

    /// Checks a caller-made v1 `message` object without its target and returns its `android.ttl`.
    ///
    /// The checks: no target key; `data`, `android.data` and `webpush.data` are string maps with
    /// allowed keys; `apns.headers` and `webpush.headers` are string maps; `notification`,
    /// `android`, `apns`, `webpush` are objects; `android.ttl` is a duration of at most 4 weeks;
    /// `android.priority` is NORMAL or HIGH.
    ///
    /// - Parameter field: the message's place (`payload_json`, `message.GCM`); errors about a
    ///   target name it, others name the member (`payload_json.android.ttl`).
    static func checkMessage(_ members: [(String, JSONValue)], field: String) throws(ValidationError)
        -> FCMDuration?
    {
        if let target = members.first(where: { targetKeys.contains($0.0) })?.0 {
            throw ValidationError(
                field: field, message: "must not contain \"\(target)\": the gateway sets the target for each token")
        }
        let message = JSONValue.object(members)
        if let data = message["data"] { try checkData(data, field: "\(field).data") }
        for block in ["notification", "android", "apns", "webpush", "fcm_options"] {
            if let value = message[block], value.objectMembers == nil {
                throw ValidationError(field: "\(field).\(block)", message: "must be a JSON object")
            }
        }
        if let headers = message["apns"]?["headers"] { try checkStringMap(headers, field: "\(field).apns.headers") }
        if let webpush = message["webpush"] {
            if let data = webpush["data"] { try checkData(data, field: "\(field).webpush.data") }
            if let headers = webpush["headers"] { try checkStringMap(headers, field: "\(field).webpush.headers") }
        }
        guard let android = message["android"] else { return nil }
        if let data = android["data"] { try checkData(data, field: "\(field).android.data") }
        if let priority = android["priority"] {
            guard case .string(let text) = priority, androidPriorities.contains(text) else {
                throw ValidationError(field: "\(field).android.priority", message: "must be \"NORMAL\" or \"HIGH\"")
            }
        }
        guard let ttl = android["ttl"] else { return nil }
        return try checkTTL(ttl, field: "\(field).android.ttl")
    }

    /// Checks an `android.ttl` value: a duration string within FCM's 0-4 week range.
    static func checkTTL(_ value: JSONValue, field: String) throws(ValidationError) -> FCMDuration {
        guard case .string(let text) = value, let ttl = FCMDuration(text) else {
            throw ValidationError(
                field: field, message: "must be a duration string of seconds ending in \"s\", e.g. \"3600s\"")
        }
        guard ttl <= FCMDuration.maxTTL else {
            throw ValidationError(field: field, message: "must be at most \(FCMDuration.maxTTL) (4 weeks)")
        }
        return ttl
    }

    /// Checks a map whose values must be strings (header maps).
    private static func checkStringMap(_ value: JSONValue, field: String) throws(ValidationError) {
        _ = try JSONStringMap.members(of: value, field: field)
    }
}

// Framing: `{"message":{"token":"` + token + `"` + rest + `}}`.
extension FCMMessageRules {
    /// Everything before the token.
    static let bodyPrefix: [UInt8] = Array(#"{"message":{"token":""#.utf8)
    /// Everything before a topic's name (``FCMToken/topicPrefix``), in place of ``bodyPrefix``.
    static let topicBodyPrefix: [UInt8] = Array(#"{"message":{"topic":""#.utf8)
    /// Everything before an installation's id (``FCMToken/installationPrefix``).
    static let installationBodyPrefix: [UInt8] = Array(#"{"message":{"fid":""#.utf8)

    /// Splits the request body around the token.
    ///
    /// - Parameter rest: the rest of `message` as one compact JSON object, `{…}` (its members
    ///   follow the token; `{}` leaves the token alone).
    /// - Returns: the bytes before and after the token.
    static func split(rest: [UInt8]) -> (prefix: [UInt8], suffix: [UInt8]) {
        precondition(rest.first == UInt8(ascii: "{") && rest.last == UInt8(ascii: "}"), "rest must be an object")
        var suffix: [UInt8] = [UInt8(ascii: "\"")]
        if rest.count > 2 {
            suffix.append(UInt8(ascii: ","))
            // Drop the `{`; its `}` closes `message`.
            suffix.append(contentsOf: rest.dropFirst())
        } else {
            suffix.append(UInt8(ascii: "}"))
        }
        suffix.append(UInt8(ascii: "}"))
        return (bodyPrefix, suffix)
    }

    /// Refuses a body over ``maxBodyBytes`` (not counting the token).
    ///
    /// - Parameter field: what to blame: `payload_json`, `message.GCM`, or empty for the whole
    ///   notification.
    static func checkSize(prefix: [UInt8], suffix: [UInt8], field: String) throws(ValidationError) {
        let size = prefix.count + suffix.count
        guard size <= maxBodyBytes else {
            throw ValidationError(
                field: field,
                message: "the FCM message is \(size) bytes without the token, over the FCM limit of "
                    + "\(maxBodyBytes) bytes")
        }
    }
}
