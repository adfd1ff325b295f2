/// Turns a ``NotificationRequest`` into an FCM HTTP v1 `messages:send` body, once per
/// notification (never per token).
///
/// The body is `{"message":{"token":"<token>",…}}`, the token first so the sender splices each
/// token between ``PreparedFCMMessage/bodyPrefix`` and ``PreparedFCMMessage/bodySuffix``.
/// Built from the fields, the rest of `message` is, in this order (only set fields appear, and
/// blocks left empty are omitted):
///
/// | Notification field     | FCM v1 `message`                                   | Also for iOS (via FCM)              |
/// |------------------------|----------------------------------------------------|-------------------------------------|
/// | `alert.title`/`body`   | `notification.title`/`body`                        | (FCM copies them into `aps.alert`)  |
/// | `alert.image`          | `notification.image`                               | —                                   |
/// | `alert.subtitle`       | —                                                  | `apns.payload.aps.alert.subtitle`   |
/// | `alert.launch_image`   | —                                                  | `aps.alert.launch-image`            |
/// | `alert.title_loc_key`  | `android.notification.title_loc_key`               | `aps.alert.title-loc-key`           |
/// | `alert.title_loc_args` | `android.notification.title_loc_args`              | `aps.alert.title-loc-args`          |
/// | `alert.loc_key`        | `android.notification.body_loc_key`                | `aps.alert.loc-key`                 |
/// | `alert.loc_args`       | `android.notification.body_loc_args`               | `aps.alert.loc-args`                |
/// | `badge`                | `android.notification.notification_count` (if > 0) | `aps.badge`                         |
/// | `sound`                | `android.notification.sound`                       | `aps.sound`                         |
/// | `category`             | `android.notification.click_action`                | `aps.category`                      |
/// | `thread_id`            | —                                                  | `aps.thread-id`                     |
/// | `content_available`    | —                                                  | `aps.content-available: 1`          |
/// | `mutable_content`      | —                                                  | `aps.mutable-content: 1`            |
/// | `interruption_level`   | —                                                  | `aps.interruption-level`            |
/// | `data_json`            | `data` (values must be strings)                    | (FCM adds data keys to the payload) |
/// | `priority` (see below) | `android.priority` `HIGH` (10) / `NORMAL` (5, 1)   | `apns.headers.apns-priority`        |
/// | `expiration`           | `android.ttl` `"<expiration − now>s"`, ≤ 4 weeks   | `apns.headers.apns-expiration`      |
/// | `collapse_id`          | `android.collapse_key`                             | `apns.headers.apns-collapse-id`     |
/// | `push_type`            | —                                                  | `apns.headers.apns-push-type`       |
/// | `topic`                | —                                                  | `apns.headers.apns-topic`           |
/// | `critical_sound`       | —                                                  | `aps.sound` `{"critical":1,…}`      |
/// | `fcm.android_icon`/`_color`/`_tag`/`_channel_id` | `android.notification.icon`/`color`/`tag`/`channel_id` | — |
/// | `fcm.analytics_label`  | `fcm_options.analytics_label`                      | —                                   |
/// | `id`                   | error: FCM generates the message id                | —                                   |
/// | `payload_json`         | the whole `message` after `token`, verbatim order  | —                                   |
///
/// `aps.alert` is written only when an APNs-only alert field is set, and then with `title` and
/// `body` too: FCM lets `apns.payload` override `notification`, so a partial `aps.alert` must not
/// be able to hide the title.
///
/// Priority: 0 means 10 when the message shows something (an alert, badge, sound or other `aps`
/// key) and 5 for a data-only or `content-available`-only message, as FCM and APNs default. An
/// explicit 10 on such a silent message stays `HIGH` for Android (it wakes the app) but is sent to
/// iOS as `apns-priority: 5`, the only value APNs takes for background pushes (docs/providers.md A.3,
/// docs/providers.md B.2); with push type `background` an explicit 10 is refused, as for APNs. A silent message
/// without a push type gets `apns-push-type: background` when `content_available` is set.
public enum FCMMessageBuilder {
    /// Validates `request` and builds the body for its tokens.
    ///
    /// - Parameters:
    ///   - path: where the notification sits in the request, prefixed to every error's field
    ///     (`notifications[2]`).
    ///   - now: the current time in Unix seconds; `expiration` becomes a TTL counted from it.
    public static func prepare(
        _ request: NotificationRequest, at path: String, now: Int64
    ) -> Result<PreparedFCMMessage, ValidationError> {
        ValidationError.result(at: path) { () throws(ValidationError) in try prepare(request, now: now) }
    }

    private static func prepare(_ n: NotificationRequest, now: Int64) throws(ValidationError) -> PreparedFCMMessage {
        try FCMToken.validateTargets(n.tokens)
        try checkFields(n)
        let rest: [UInt8]
        let expiration: Int64?
        let blame: String
        if n.payloadJSON.isEmpty {
            rest = try buildRest(n, now: now)
            expiration = n.expiration == 0 ? nil : min(n.expiration, now + FCMDuration.maxTTL.seconds)
            blame = ""
        } else {
            let ttl: FCMDuration?
            (rest, ttl) = try verbatimRest(n)
            expiration = ttl.map { now + $0.secondsRoundedUp }
            blame = "payload_json"
        }
        let (prefix, suffix) = FCMMessageRules.split(rest: rest)
        try FCMMessageRules.checkSize(prefix: prefix, suffix: suffix, field: blame)
        return PreparedFCMMessage(bodyPrefix: prefix, bodySuffix: suffix, expiration: expiration, tokens: n.tokens)
    }

    /// The checks on single fields, shared with the APNs validator where the rule is APNs's (the
    /// values reach APNs through FCM's `apns` block).
    private static func checkFields(_ n: NotificationRequest) throws(ValidationError) {
        try NotificationValidator.checkScalars(n)
        try n.refuseWebPushOnlyFields(provider: "FCM")
        try n.refuseLiveActivity(provider: "FCM")
        try n.fcm?.check()
        guard n.id.isEmpty else {
            throw ValidationError(field: "id", message: "cannot be set for FCM: FCM assigns the message id")
        }
        guard n.topic.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ValidationError(field: "topic", message: "must be printable ASCII without spaces")
        }
        if n.pushType == .background, n.priority == 10 {
            throw ValidationError(field: "priority", message: "priority 10 is not allowed for background pushes")
        }
    }

    /// `payload_json` as the rest of `message`, re-serialised compactly in its own key order.
    private static func verbatimRest(_ n: NotificationRequest) throws(ValidationError) -> ([UInt8], FCMDuration?) {
        if let field = n.firstFCMBuildingField {
            throw ValidationError(field: field, message: "must be empty when payload_json is set")
        }
        let payload: JSONValue
        do throws(JSONError) {
            payload = try JSONParser.parse(n.payloadJSON.utf8)
        } catch {
            throw ValidationError(field: "payload_json", message: error.description)
        }
        guard let members = payload.objectMembers else {
            throw ValidationError(
                field: "payload_json", message: "must be a JSON object: the FCM v1 message without its target")
        }
        let ttl = try FCMMessageRules.checkMessage(members, field: "payload_json")
        return (JSONWriter.encode(payload), ttl)
    }
}

extension NotificationRequest {
    /// The first field that builds part of an FCM message, by its proto name; with `payload_json`
    /// holding the whole message these must stay empty. Wider than the APNs rule: priority,
    /// expiration, collapse id, push type and topic are headers for APNs but live inside the
    /// FCM message, so with `payload_json` they belong in its `android`/`apns` blocks.
    var firstFCMBuildingField: String? {
        if !(alert?.isEmpty ?? true) { return "alert" }
        if let field = firstPayloadBuildingField { return field }
        if pushType != nil { return "push_type" }
        if priority != 0 { return "priority" }
        if expiration != 0 { return "expiration" }
        if !collapseID.isEmpty { return "collapse_id" }
        if !topic.isEmpty { return "topic" }
        if let fcm, !fcm.isEmpty { return "fcm" }
        return nil
    }
}
