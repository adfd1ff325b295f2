/// Turns a ``NotificationRequest`` into a Web Push message, once per notification: the plaintext
/// every subscriber's service worker receives (encrypted per subscriber by the sender) and the
/// headers shared by all of them. The subscriptions themselves are checked by the gateway
/// (`WebPushSubscription`: parsing them needs the P-256 curve, which PushCore does not have).
///
/// The plaintext is `payload_json` as given (it must be JSON), or else a small JSON object built
/// from the fields, which a service worker reads with `event.data.json()`:
///
/// | Notification field  | Web Push                                                          |
/// |---------------------|-------------------------------------------------------------------|
/// | `alert.title`       | `"title"`                                                         |
/// | `alert.body`        | `"body"`                                                          |
/// | `alert.image`       | `"image"` (a URL, for `showNotification`'s `image`)               |
/// | `badge` (when set)  | `"app_badge"`: a number, for `navigator.setAppBadge` (0 clears)   |
/// | `data_json`         | `"data"`: the object as given (any JSON values)                   |
/// | `content_available` | allows a message with none of the above: `{}`                     |
/// | `expiration`        | `TTL` header = expiration − now, 0 … 2,419,200; unset: 2,419,200  |
/// | `urgency`           | `Urgency` header: `very-low`, `low`, `normal` or `high`           |
/// | `priority`          | `Urgency` when `urgency` is empty: 10 high, 5 normal, 1 low       |
/// | `collapse_id`       | `Topic` header: ≤ 32 characters of `A-Za-z0-9-_`, length ≢ 1 mod 4 |
/// | `sound`, `category`, `thread_id`, `mutable_content`, `interruption_level`, `push_type`, `topic`, `id`, `alert.subtitle`/`launch_image`/`*loc_key`/`*loc_args` | error: Web Push has no place for them |
///
/// With `webpush.declarative` the plaintext is the declarative form instead
/// (``WebPushDeclarativeMessage``). The plaintext must fit one 4,096-byte record: at most
/// ``WebPushMessageRules/maxPlaintextBytes``.
public enum WebPushMessageBuilder {
    /// Validates `request` and builds the message for its subscriptions.
    ///
    /// - Parameters:
    ///   - path: where the notification sits in the request, prefixed to every error's field.
    ///   - now: Unix seconds; `expiration` becomes the `TTL` counted from it.
    public static func prepare(
        _ request: NotificationRequest, at path: String, now: Int64
    ) -> Result<PreparedWebPushMessage, ValidationError> {
        ValidationError.result(at: path) { () throws(ValidationError) in try prepare(request, now: now) }
    }

    private static func prepare(_ n: NotificationRequest, now: Int64) throws(ValidationError) -> PreparedWebPushMessage
    {
        guard !n.tokens.isEmpty else {
            throw ValidationError(field: "tokens", message: "at least one subscription is required")
        }
        try NotificationValidator.checkScalars(n)
        try n.refuseLiveActivity(provider: "Web Push")
        if case (let field, let why)? = n.firstFieldWebPushCannotCarry {
            throw ValidationError(field: field, message: "cannot be sent by Web Push: " + why)
        }
        let urgency = try urgency(of: n)
        if !n.collapseID.isEmpty, !WebPushMessageRules.isValidTopic(n.collapseID) {
            throw ValidationError(
                field: "collapse_id",
                message: "is the Web Push Topic: at most \(WebPushMessageRules.maxTopicCharacters) characters "
                    + "of A-Za-z0-9-_, and not 1, 5, 9, … long (no base64 has that length)")
        }
        let plaintext: [UInt8]
        let blame: String
        if let options = n.webPush, options.declarative {
            plaintext = try WebPushDeclarativeMessage.build(n, options)
            blame = ""
        } else if let field = n.webPush?.firstDeclarativeOnlyField {
            throw ValidationError(
                field: "webpush.\(field)", message: "is a member of the declarative form: set webpush.declarative")
        } else if n.payloadJSON.isEmpty {
            plaintext = try build(n)
            blame = ""
        } else {
            if let field = n.firstWebPushBuildingField {
                throw ValidationError(field: field, message: "must be empty when payload_json is set")
            }
            do throws(JSONError) {
                _ = try JSONParser.parse(n.payloadJSON.utf8)
            } catch {
                throw ValidationError(field: "payload_json", message: error.description)
            }
            plaintext = Array(n.payloadJSON.utf8)
            blame = "payload_json"
        }
        guard plaintext.count <= WebPushMessageRules.maxPlaintextBytes else {
            throw ValidationError(
                field: blame,
                message: "the Web Push message is \(plaintext.count) bytes; at most "
                    + "\(WebPushMessageRules.maxPlaintextBytes) fit in the 4096-byte encrypted body")
        }
        let ttl =
            n.secondsToExpiration(now: now, within: 0...WebPushMessageRules.maxTTL) ?? WebPushMessageRules.defaultTTL
        return PreparedWebPushMessage(
            plaintext: plaintext, ttl: ttl, urgency: urgency, topic: n.collapseID, expiration: now + ttl,
            tokens: n.tokens)
    }

    private static func urgency(of n: NotificationRequest) throws(ValidationError) -> String {
        guard !n.urgency.isEmpty else { return WebPushMessageRules.urgency(forPriority: n.priority) }
        guard WebPushMessageRules.urgencies.contains(n.urgency) else {
            throw ValidationError(field: "urgency", message: "must be very-low, low, normal or high")
        }
        return n.urgency
    }

    /// The JSON object built from the fields (the table above).
    private static func build(_ n: NotificationRequest) throws(ValidationError) -> [UInt8] {
        var data: JSONValue?
        if !n.dataJSON.isEmpty {
            do throws(JSONError) {
                data = try JSONParser.parse(n.dataJSON.utf8)
            } catch {
                throw ValidationError(field: "data_json", message: error.description)
            }
            guard data?.objectMembers != nil else {
                throw ValidationError(field: "data_json", message: "must be a JSON object")
            }
        }
        let alert = n.alert ?? NotificationRequest.Alert()
        guard
            !alert.title.isEmpty || !alert.body.isEmpty || !alert.image.isEmpty || n.badge != nil || data != nil
                || n.contentAvailable
        else {
            throw ValidationError(
                field: "",
                message: "notification has nothing to send: set alert, badge, data_json, content_available "
                    + "or payload_json")
        }
        var writer = JSONWriter(reservingCapacity: 128 + n.dataJSON.utf8.count)
        writer.beginObject()
        writer.member("title", nonEmpty: alert.title)
        writer.member("body", nonEmpty: alert.body)
        writer.member("image", nonEmpty: alert.image)
        if let badge = n.badge {
            writer.key("app_badge")
            writer.int(badge)
        }
        if let data {
            writer.key("data")
            writer.value(data)
        }
        writer.endObject()
        return writer.bytes
    }
}

extension NotificationRequest {
    /// The first set field that Web Push has no place for, by its proto name, and why. Refused
    /// rather than dropped: a caller who sets them expects an effect Web Push cannot give.
    var firstFieldWebPushCannotCarry: (field: String, why: String)? {
        let worker = "the service worker builds the notification; put what it needs in data_json"
        if !id.isEmpty { return ("id", "the push service names the message itself (the result's id)") }
        if !topic.isEmpty { return ("topic", "it is an APNs topic; use collapse_id for the Web Push Topic") }
        if pushType != nil { return ("push_type", "Web Push has no push types; " + worker) }
        if let field = alert?.firstAPNsOnlyField { return ("alert.\(field)", worker) }
        if !sound.isEmpty { return ("sound", "web notifications play the system's sound; " + worker) }
        if !threadID.isEmpty { return ("thread_id", worker) }
        if !category.isEmpty { return ("category", worker) }
        if mutableContent { return ("mutable_content", worker) }
        if !interruptionLevel.isEmpty { return ("interruption_level", worker) }
        if criticalSound != nil { return ("critical_sound", "critical alerts are APNs's") }
        if let fcm, !fcm.isEmpty { return ("fcm", "it is for FCM messages") }
        return nil
    }

    /// The first field that builds part of the plaintext; with `payload_json` holding all of it
    /// these must stay empty.
    var firstWebPushBuildingField: String? {
        if !(alert?.isEmpty ?? true) { return "alert" }
        if badge != nil { return "badge" }
        if contentAvailable { return "content_available" }
        if !dataJSON.isEmpty { return "data_json" }
        return nil
    }
}

extension NotificationRequest {
    /// Refuses the fields only Web Push has (`urgency`) for another `provider`: refused rather
    /// than dropped, like every field a provider cannot carry.
    func refuseWebPushOnlyFields(provider: String) throws(ValidationError) {
        guard urgency.isEmpty else {
            throw ValidationError(
                field: "urgency", message: "is a Web Push header; \(provider) takes priority (0, 1, 5 or 10) instead")
        }
        guard webPush?.isEmpty ?? true else {
            throw ValidationError(field: "webpush", message: "is for Web Push messages; \(provider) cannot carry it")
        }
    }
}
