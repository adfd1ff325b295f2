// The legacy FCM format (`/fcm/send`, docs/providers.md B.7) translated to a v1 message, as SNS does.
extension SNSFCMPayload {
    /// Legacy `notification` keys and where v1 wants them: `message.notification` for the
    /// cross-platform three, `android.notification` (renamed where v1 renamed it) for the rest.
    static let legacyNotificationKeys: [String: (block: NotificationBlock, name: String)] = [
        "title": (.common, "title"), "body": (.common, "body"), "image": (.common, "image"),
        "icon": (.android, "icon"), "sound": (.android, "sound"), "tag": (.android, "tag"),
        "color": (.android, "color"), "click_action": (.android, "click_action"),
        "body_loc_key": (.android, "body_loc_key"), "body_loc_args": (.android, "body_loc_args"),
        "title_loc_key": (.android, "title_loc_key"), "title_loc_args": (.android, "title_loc_args"),
        "android_channel_id": (.android, "channel_id"),
    ]

    enum NotificationBlock { case common, android }

    /// The top-level legacy keys understood. Anything else (a typo, `dry_run`, iOS-only keys this
    /// translation can't place) is refused rather than dropped, so the sender learns of it.
    static let legacyKeys: Set<String> = [
        "data", "notification", "time_to_live", "collapse_key", "priority", "restricted_package_name",
        "content_available", "mutable_content",
    ]

    /// Translates a legacy FCM object:
    ///
    /// | Legacy                                | v1 `message`                                                    |
    /// |---------------------------------------|-----------------------------------------------------------------|
    /// | `data` (any JSON values)              | `data`, values stringified (`1` → `"1"`, `{…}` → its JSON text) |
    /// | `notification.title/body/image`       | `notification.title/body/image`                                 |
    /// | `notification.*` (others)             | `android.notification.*` (`android_channel_id` → `channel_id`)  |
    /// | `time_to_live` (seconds)              | `android.ttl` `"<n>s"`                                          |
    /// | `collapse_key`                        | `android.collapse_key`                                          |
    /// | `priority` `high`/`normal`            | `android.priority` `HIGH`/`NORMAL`                              |
    /// | `restricted_package_name`             | `android.restricted_package_name`                               |
    /// | `content_available: true`             | `apns.payload.aps.content-available: 1`                         |
    /// | `mutable_content: true`               | `apns.payload.aps.mutable-content: 1`                           |
    /// | `to`, `registration_ids`, `condition` | error: SNS sets the target                                      |
    static func legacyMessage(_ members: [(String, JSONValue)]) throws(ValidationError) -> Message {
        let legacy = JSONValue.object(members)
        for (key, _) in members where !legacyKeys.contains(key) {
            let target = ["to", "registration_ids", "condition"].contains(key)
            throw ValidationError(
                field: "\(field).\(key)",
                message: target
                    ? "must not be set: SNS sends to the endpoint's token"
                    : "is not a legacy FCM field this gateway translates; use {\"fcmV1Message\":{\"message\":{…}}}")
        }
        var message: [(String, JSONValue)] = []
        var android: [(String, JSONValue)] = []
        var androidNotification: [(String, JSONValue)] = []
        var ttl: FCMDuration?
        if let notification = legacy["notification"] {
            var common: [(String, JSONValue)] = []
            try translateNotification(notification, common: &common, android: &androidNotification)
            if !common.isEmpty { message.append(("notification", .object(common))) }
        }
        if let data = legacy["data"] { message.append(("data", .object(try stringifiedData(data)))) }
        if let key = try string(legacy, "collapse_key") { android.append(("collapse_key", .string(key))) }
        if let priority = try string(legacy, "priority") {
            guard priority == "high" || priority == "normal" else {
                throw ValidationError(field: "\(field).priority", message: "must be \"high\" or \"normal\"")
            }
            android.append(("priority", .string(priority.uppercased())))
        }
        if let seconds = legacy["time_to_live"] {
            let value = try timeToLive(seconds)
            ttl = value
            android.append(("ttl", .string(value.description)))
        }
        if let name = try string(legacy, "restricted_package_name") {
            android.append(("restricted_package_name", .string(name)))
        }
        if !androidNotification.isEmpty { android.append(("notification", .object(androidNotification))) }
        if !android.isEmpty { message.append(("android", .object(android))) }
        let aps = try legacyAPS(legacy)
        if !aps.isEmpty { message.append(("apns", .object([("payload", .object([("aps", .object(aps))]))]))) }
        return Message(members: message, ttl: ttl)
    }

    /// Legacy `data` values may be any JSON; v1 takes strings only, so the rest become their
    /// compact JSON text, as SNS does (docs/providers.md B.7).
    private static func stringifiedData(_ data: JSONValue) throws(ValidationError) -> [(String, JSONValue)] {
        guard let members = data.objectMembers else {
            throw ValidationError(field: "\(field).data", message: "must be a JSON object")
        }
        var strings: [(String, JSONValue)] = []
        for (key, value) in members {
            try FCMMessageRules.checkDataKey(key, field: "\(field).data.\(key)")
            if case .string = value {
                strings.append((key, value))
            } else {
                strings.append((key, .string(String(decoding: JSONWriter.encode(value), as: UTF8.self))))
            }
        }
        return strings
    }

    private static func translateNotification(
        _ notification: JSONValue, common: inout [(String, JSONValue)], android: inout [(String, JSONValue)]
    ) throws(ValidationError) {
        guard let members = notification.objectMembers else {
            throw ValidationError(field: "\(field).notification", message: "must be a JSON object")
        }
        for (key, value) in members {
            let keyField = "\(field).notification.\(key)"
            guard let (block, name) = legacyNotificationKeys[key] else {
                throw ValidationError(
                    field: keyField, message: "is not a legacy FCM notification field this gateway translates")
            }
            let translated: JSONValue
            if key.hasSuffix("_loc_args") {
                translated = try locArgs(value, field: keyField)
            } else {
                guard case .string = value else {
                    throw ValidationError(field: keyField, message: "must be a JSON string")
                }
                translated = value
            }
            if block == .common { common.append((name, translated)) } else { android.append((name, translated)) }
        }
    }

    /// `*_loc_args`: legacy FCM documents them as "JSON array as string"; clients send both the
    /// array and the string holding it. v1 takes an array of strings.
    private static func locArgs(_ value: JSONValue, field: String) throws(ValidationError) -> JSONValue {
        var array = value
        if case .string(let text) = value, let parsed = try? JSONParser.parse(text.utf8) { array = parsed }
        guard case .array(let elements) = array,
            elements.allSatisfy({ if case .string = $0 { true } else { false } })
        else {
            throw ValidationError(field: field, message: "must be an array of strings (or a string holding one)")
        }
        return array
    }

    /// `time_to_live`: whole seconds, 0 up to 4 weeks (legacy FCM answered `InvalidTtl` otherwise).
    private static func timeToLive(_ value: JSONValue) throws(ValidationError) -> FCMDuration {
        guard case .number(let text) = value, let seconds = Int64(text), seconds >= 0,
            seconds <= FCMDuration.maxTTL.seconds
        else {
            throw ValidationError(
                field: "\(field).time_to_live",
                message: "must be a whole number of seconds from 0 to \(FCMDuration.maxTTL.seconds) (4 weeks)")
        }
        return FCMDuration(seconds: seconds)
    }

    /// `content_available`/`mutable_content`, the legacy iOS flags, as `aps` keys.
    private static func legacyAPS(_ legacy: JSONValue) throws(ValidationError) -> [(String, JSONValue)] {
        var aps: [(String, JSONValue)] = []
        for (key, apsKey) in [("content_available", "content-available"), ("mutable_content", "mutable-content")] {
            guard let value = legacy[key] else { continue }
            guard case .bool(let flag) = value else {
                throw ValidationError(field: "\(field).\(key)", message: "must be true or false")
            }
            if flag { aps.append((apsKey, .number("1"))) }
        }
        return aps
    }

    /// A member that must be a string when present.
    private static func string(_ object: JSONValue, _ key: String) throws(ValidationError) -> String? {
        guard let value = object[key] else { return nil }
        guard case .string(let text) = value else {
            throw ValidationError(field: "\(field).\(key)", message: "must be a JSON string")
        }
        return text
    }
}
