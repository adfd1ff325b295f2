// Building the rest of `message` from a notification's fields (the table on FCMMessageBuilder).
extension FCMMessageBuilder {
    /// The members after `token`, as one object `{…}`: `notification`, `data`, `android`, `apns`.
    static func buildRest(_ n: NotificationRequest, now: Int64) throws(ValidationError) -> [UInt8] {
        let data = try dataMembers(n.dataJSON)
        guard !(n.alert?.isEmpty ?? true) || !n.apsIsEmpty || !data.isEmpty else {
            throw ValidationError(
                field: "",
                message: "notification has nothing to send: set alert, badge, sound, content_available, "
                    + "data_json or payload_json")
        }
        let priority = Priority(n)
        var writer = JSONWriter(reservingCapacity: 512 + n.dataJSON.utf8.count)
        writer.beginObject()
        if let alert = n.alert {
            writeObject("notification", to: &writer) { writer in
                writer.member("title", nonEmpty: alert.title)
                writer.member("body", nonEmpty: alert.body)
                writer.member("image", nonEmpty: alert.image)
            }
        }
        writeObject("data", to: &writer) { writer in
            // Not member(_:nonEmpty:): an empty string is a real data value.
            for (key, value) in data {
                writer.key(key)
                writer.string(value)
            }
        }
        writeAndroid(n, priority: priority, now: now, to: &writer)
        writeAPNs(n, priority: priority, to: &writer)
        writeObject("fcm_options", to: &writer) { writer in
            writer.member("analytics_label", nonEmpty: n.fcm?.analyticsLabel ?? "")
        }
        writer.endObject()
        return writer.bytes
    }

    /// `data_json`'s members; FCM takes only string values and refuses some keys.
    private static func dataMembers(_ text: String) throws(ValidationError) -> [(String, String)] {
        try JSONStringMap.members(
            ofJSON: text, field: "data_json", why: ": FCM data values are strings (quote numbers and booleans)",
            keyRule: FCMMessageRules.checkDataKey(_:field:))
    }

    /// `android`: collapse key, priority, TTL, and the Android notification fields.
    private static func writeAndroid(
        _ n: NotificationRequest, priority: Priority, now: Int64, to writer: inout JSONWriter
    ) {
        writeObject("android", to: &writer) { writer in
            writer.member("collapse_key", nonEmpty: n.collapseID)
            writer.member("priority", nonEmpty: priority.android)
            // An expiration already past still goes out with 0s: "deliver now or drop".
            if let ttl = n.secondsToExpiration(now: now, within: 0...FCMDuration.maxTTL.seconds) {
                writer.member("ttl", nonEmpty: "\(ttl)s")
            }
            writeObject("notification", to: &writer) { writer in
                if let alert = n.alert {
                    writer.member("title_loc_key", nonEmpty: alert.titleLocKey)
                    writer.member("title_loc_args", nonEmpty: alert.titleLocArgs)
                    writer.member("body_loc_key", nonEmpty: alert.locKey)
                    writer.member("body_loc_args", nonEmpty: alert.locArgs)
                }
                writer.member("sound", nonEmpty: n.sound)
                writer.member("click_action", nonEmpty: n.category)
                if let fcm = n.fcm {
                    writer.member("icon", nonEmpty: fcm.androidIcon)
                    writer.member("color", nonEmpty: fcm.androidColor)
                    writer.member("tag", nonEmpty: fcm.androidTag)
                    writer.member("channel_id", nonEmpty: fcm.androidChannelID)
                }
                // 0 clears an iOS badge; Android has nothing to clear, and a count of 0 means "unset".
                if let badge = n.badge, badge > 0 {
                    writer.key("notification_count")
                    writer.int(badge)
                }
            }
        }
    }

    /// `apns`: the APNs headers, and `payload.aps` for what only APNs has.
    private static func writeAPNs(_ n: NotificationRequest, priority: Priority, to writer: inout JSONWriter) {
        writeObject("apns", to: &writer) { writer in
            writeObject("headers", to: &writer) { writer in
                writer.member("apns-priority", nonEmpty: String(priority.apns))
                if n.expiration != 0 { writer.member("apns-expiration", nonEmpty: String(n.expiration)) }
                writer.member("apns-collapse-id", nonEmpty: n.collapseID)
                writer.member("apns-push-type", nonEmpty: priority.apnsPushType ?? "")
                writer.member("apns-topic", nonEmpty: n.topic)
            }
            // title and body reach iOS through `notification`; aps.alert only for the rest.
            var aps = n
            if !(n.alert?.hasAPNsOnlyFields ?? false) { aps.alert = nil }
            if !aps.apsIsEmpty {
                writeObject("payload", to: &writer) { writer in
                    writer.key("aps")
                    APNsPayloadBuilder.writeAPS(aps, to: &writer)
                }
            }
        }
    }
}

extension FCMMessageBuilder {
    /// The priorities and push type of a built message (the rules on ``FCMMessageBuilder``).
    struct Priority {
        /// `android.priority`.
        var android: String
        /// `apns-priority`.
        var apns: Int
        /// `apns-push-type`, nil to let FCM choose.
        var apnsPushType: String?

        init(_ n: NotificationRequest) {
            // Silent: nothing to show, so iOS treats it as a background push.
            let silent = (n.alert?.isEmpty ?? true) && n.apsIsEmptyIgnoringContentAvailable
            let background = n.pushType == .background || (n.pushType == nil && silent)
            let effective = n.priority != 0 ? Int(n.priority) : (background ? 5 : 10)
            android = effective == 10 ? "HIGH" : "NORMAL"
            apns = background && effective == 10 ? 5 : effective
            apnsPushType = n.pushType?.rawValue ?? (silent && n.contentAvailable ? PushType.background.rawValue : nil)
        }
    }

    /// Writes `"key":{…}` with what `body` writes, or nothing when `body` writes nothing.
    static func writeObject(_ key: String, to writer: inout JSONWriter, _ body: (inout JSONWriter) -> Void) {
        var inner = JSONWriter()
        inner.beginObject()
        body(&inner)
        inner.endObject()
        guard inner.bytes.count > 2 else { return }
        writer.key(key)
        writer.raw(String(decoding: inner.bytes, as: UTF8.self))
    }

}

extension NotificationRequest.Alert {
    /// True when a field only APNs can show is set: these need an `aps.alert` in the FCM message.
    var hasAPNsOnlyFields: Bool { firstAPNsOnlyField != nil }

    /// The first set field that only APNs shows, by its proto name (`subtitle`, `loc_key`, …).
    var firstAPNsOnlyField: String? {
        if !subtitle.isEmpty { return "subtitle" }
        if !launchImage.isEmpty { return "launch_image" }
        if !titleLocKey.isEmpty { return "title_loc_key" }
        if !titleLocArgs.isEmpty { return "title_loc_args" }
        if !locKey.isEmpty { return "loc_key" }
        if !locArgs.isEmpty { return "loc_args" }
        if !actionLocKey.isEmpty { return "action_loc_key" }
        return nil
    }
}
