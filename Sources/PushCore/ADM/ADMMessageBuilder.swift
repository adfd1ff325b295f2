/// Turns a ``NotificationRequest`` into an ADM send body, once per notification (never per
/// registration id: the id goes in the path, so one body serves every token).
///
/// ADM delivers only data: its message is `{"data":{…},"consolidationKey":…,"expiresAfter":…}` and
/// the app's `ADMMessageHandler` builds any visible notification itself. So that a plain alert
/// Send reaches a Fire app, the displayable fields become `data` keys under the names a handler
/// reads with `intent.getExtras().getString("title")`:
///
/// | Notification field      | ADM body                                                     |
/// |-------------------------|--------------------------------------------------------------|
/// | `alert.title`           | `data.title`                                                 |
/// | `alert.body`            | `data.body`                                                  |
/// | `alert.image`           | `data.image`                                                 |
/// | `badge` (when set)      | `data.badge`, decimal string (`"0"` too: it clears)          |
/// | `sound`                 | `data.sound`                                                 |
/// | `data_json`             | `data`, after the keys above; values must be strings         |
/// | `collapse_id`           | `consolidationKey` (≤ 64 bytes)                              |
/// | `expiration`            | `expiresAfter` = expiration − now, clamped to 1 … 2,592,000  |
/// | `content_available`     | nothing to add (every ADM message wakes the app); allows an empty `data` "sync" message |
/// | `priority`              | ignored: ADM has no priority (still must be 0, 1, 5 or 10)    |
/// | `payload_json`          | the whole body, checked (``ADMMessageRules``), re-serialised compactly |
/// | `id`, `topic`, `push_type`, `thread_id`, `category`, `mutable_content`, `interruption_level`, `alert.subtitle`/`launch_image`/`*loc_key`/`*loc_args` | error: ADM cannot carry them |
///
/// A `data_json` key that one of the mapped fields also writes (`title` with `alert.title` set) is
/// an error rather than a silent overwrite. `data` is always written, `{}` when empty; the other
/// keys only when set. A notification must have something to deliver: an alert, badge, sound,
/// data, or `content_available` for an empty sync message.
public enum ADMMessageBuilder {
    /// Validates `request` and builds the body for its registration ids.
    ///
    /// - Parameters:
    ///   - path: where the notification sits in the request, prefixed to every error's field
    ///     (`notifications[2]`).
    ///   - now: the current time in Unix seconds; `expiration` becomes `expiresAfter` counted from
    ///     it, and ``PreparedADMMessage/expiration`` is `now + expiresAfter`.
    public static func prepare(
        _ request: NotificationRequest, at path: String, now: Int64
    ) -> Result<PreparedADMMessage, ValidationError> {
        ValidationError.result(at: path) { () throws(ValidationError) in try prepare(request, now: now) }
    }

    private static func prepare(_ n: NotificationRequest, now: Int64) throws(ValidationError) -> PreparedADMMessage {
        try ADMRegistrationID.shape.validate(tokens: n.tokens)
        try NotificationValidator.checkScalars(n)
        try n.refuseWebPushOnlyFields(provider: "ADM")
        try n.refuseLiveActivity(provider: "ADM")
        if case (let field, let why)? = n.firstFieldADMCannotCarry {
            throw ValidationError(field: field, message: "cannot be sent to ADM: " + why)
        }
        let body: [UInt8]
        let expiresAfter: Int64?
        let blame: String
        if n.payloadJSON.isEmpty {
            (body, expiresAfter) = try build(n, now: now)
            blame = ""
        } else {
            (body, expiresAfter) = try verbatim(n)
            blame = "payload_json"
        }
        try ADMMessageRules.checkSize(body, field: blame)
        return PreparedADMMessage(body: body, expiration: expiresAfter.map { now + $0 }, tokens: n.tokens)
    }

    /// The body built from the fields, and its `expiresAfter`.
    private static func build(_ n: NotificationRequest, now: Int64) throws(ValidationError) -> ([UInt8], Int64?) {
        let mapped = mappedData(n)
        let custom = try JSONStringMap.members(
            ofJSON: n.dataJSON, field: "data_json", why: ": ADM data values are strings (quote numbers and booleans)")
        for (key, _) in custom {
            guard let source = mapped.first(where: { $0.key == key })?.source else { continue }
            throw ValidationError(
                field: "data_json.\(key)", message: "conflicts with \(source), which ADM receives as data.\(key)")
        }
        guard !mapped.isEmpty || !custom.isEmpty || n.contentAvailable else {
            throw ValidationError(
                field: "",
                message: "notification has nothing to send: set alert, badge, sound, content_available, "
                    + "data_json or payload_json")
        }
        let expiresAfter = n.secondsToExpiration(
            now: now, within: ADMMessageRules.minExpiresAfter...ADMMessageRules.maxExpiresAfter)
        var writer = JSONWriter(reservingCapacity: 256 + n.dataJSON.utf8.count)
        writer.beginObject()
        writer.key("data")
        writer.beginObject()
        for (key, value) in mapped.map({ ($0.key, $0.value) }) + custom {
            writer.key(key)
            writer.string(value)
        }
        writer.endObject()
        if !n.collapseID.isEmpty {
            writer.key("consolidationKey")
            writer.string(n.collapseID)
        }
        if let expiresAfter {
            writer.key("expiresAfter")
            writer.int(expiresAfter)
        }
        writer.endObject()
        return (writer.bytes, expiresAfter)
    }

    /// The `data` entries the mapped fields write (the table above), with the field each came from.
    private static func mappedData(_ n: NotificationRequest) -> [(key: String, value: String, source: String)] {
        var entries: [(key: String, value: String, source: String)] = []
        if let alert = n.alert {
            for (key, value) in [("title", alert.title), ("body", alert.body), ("image", alert.image)]
            where !value.isEmpty {
                entries.append((key, value, "alert.\(key)"))
            }
        }
        if let badge = n.badge { entries.append(("badge", String(badge), "badge")) }
        if !n.sound.isEmpty { entries.append(("sound", n.sound, "sound")) }
        return entries
    }

    /// `payload_json` as the body, checked and re-serialised compactly in its own key order.
    private static func verbatim(_ n: NotificationRequest) throws(ValidationError) -> ([UInt8], Int64?) {
        if let field = n.firstADMBuildingField {
            throw ValidationError(field: field, message: "must be empty when payload_json is set")
        }
        let members = try ADMMessageRules.parseBody(n.payloadJSON, field: "payload_json")
        let expiresAfter = try ADMMessageRules.checkBody(members, field: "payload_json")
        return (JSONWriter.encode(.object(members)), expiresAfter)
    }
}

extension NotificationRequest {
    /// The first set field that ADM has no place for, by its proto name, and why. These are
    /// refused rather than dropped: a caller who sets them expects an effect ADM cannot give.
    var firstFieldADMCannotCarry: (field: String, why: String)? {
        let apnsOnly =
            "ADM delivers only data to the app, which builds any notification; put what it needs in data_json"
        if !id.isEmpty { return ("id", "ADM has no message id") }
        if !topic.isEmpty { return ("topic", "it is an APNs topic; an ADM app is chosen by its credentials") }
        if pushType != nil { return ("push_type", "ADM has no push types; " + apnsOnly) }
        if let field = alert?.firstAPNsOnlyField { return ("alert.\(field)", apnsOnly) }
        if !threadID.isEmpty { return ("thread_id", apnsOnly) }
        if !category.isEmpty { return ("category", apnsOnly) }
        if mutableContent { return ("mutable_content", apnsOnly) }
        if !interruptionLevel.isEmpty { return ("interruption_level", apnsOnly) }
        if criticalSound != nil { return ("critical_sound", "critical alerts are APNs's") }
        if let fcm, !fcm.isEmpty { return ("fcm", "it is for FCM messages") }
        return nil
    }

    /// The first field that builds part of an ADM body, by its proto name; with `payload_json`
    /// holding the whole body these must stay empty.
    var firstADMBuildingField: String? {
        if !(alert?.isEmpty ?? true) { return "alert" }
        if badge != nil { return "badge" }
        if !sound.isEmpty { return "sound" }
        if contentAvailable { return "content_available" }
        if !dataJSON.isEmpty { return "data_json" }
        if expiration != 0 { return "expiration" }
        if !collapseID.isEmpty { return "collapse_id" }
        return nil
    }
}
