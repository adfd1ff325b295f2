/// Turns a ``NotificationRequest`` into a Huawei Push Kit request body, once per notification; per
/// token only the token is spliced in (docs/providers.md, Huawei H.4 and H.6):
///
/// | Notification field    | v3 (HarmonyOS NEXT), `push-type: 0`             | v2 (HMS Core, `/v1/{appId}`)                  |
/// |-----------------------|-------------------------------------------------|-----------------------------------------------|
/// | `alert.title`, `body` | `payload.notification.title`, `body` (required) | `message.android.notification.title`, `body` |
/// | `alert.image`         | `payload.notification.image`                    | `message.android.notification.image`         |
/// | `category`            | `payload.notification.category`: Huawei's category (`IM`, `VOIP`, … `MARKETING`); empty: `MARKETING` | `message.android.category` when set |
/// | `badge`               | `payload.notification.badge.setNum`             | `message.android.notification.badge.set_num` |
/// | `data_json`           | `payload.notification.clickAction.data` (the app reads it on a tap) | `message.data`, as a JSON string |
/// | (always)              | `clickAction: {"actionType": 0}` (open the app) | `click_action: {"type": 3}` (open the app)    |
/// | `content_available` with no alert | `push-type: 6`, `payload.extraData`: `data_json` as a string | `message.data` alone (a data message) |
/// | `expiration`          | `pushOptions.ttl`, seconds, ≤ 1,296,000          | `message.android.ttl`, `"<seconds>s"`         |
/// | `priority`            | —                                               | 10: `android.urgency` `HIGH`; 1, 5: `NORMAL`  |
/// | `payload_json`        | the whole `payload` (push-type 6 when it holds only `extraData`) | the whole `message`, without `token` |
/// | anything else (`sound`, `thread_id`, `collapse_id`, `push_type`, `topic`, `id`, …) | refused, naming the field | refused |
///
/// The body, tokens aside, must be at most 4,096 bytes (Huawei's limit, code 80300008).
public enum HMSMessageBuilder {
    /// Huawei's notification categories (v3 `notification.category`, H.4); `PLAY_VOICE` needs push-type 2.
    public static let categories: Set<String> = [
        "IM", "VOIP", "MISS_CALL", "SUBSCRIPTION", "TRAVEL", "HEALTH", "WORK", "ACCOUNT", "EXPRESS", "FINANCE",
        "DEVICE_REMINDER", "MAIL", "MARKETING",
    ]
    public static let maxBodyBytes = 4096
    public static let maxTTL: Int64 = 1_296_000

    public static func prepare(
        _ request: NotificationRequest, at path: String, api: HMSAPI, now: Int64
    ) -> Result<PreparedHMSMessage, ValidationError> {
        ValidationError.result(at: path) { () throws(ValidationError) in try prepare(request, api: api, now: now) }
    }

    private static func prepare(_ n: NotificationRequest, api: HMSAPI, now: Int64) throws(ValidationError)
        -> PreparedHMSMessage
    {
        try HMSToken.shape.validate(tokens: n.tokens)
        return try message(n, api: api, now: now)
    }

    /// The message without its tokens' check: a Publish builds it once, before the fan-out has any
    /// (its endpoints' tokens were checked when they were registered).
    static func message(_ n: NotificationRequest, api: HMSAPI, now: Int64) throws(ValidationError)
        -> PreparedHMSMessage
    {
        try NotificationValidator.checkScalars(n)
        try n.refuseWebPushOnlyFields(provider: "Huawei Push Kit")
        try n.refuseLiveActivity(provider: "Huawei Push Kit")
        try n.refuseFCMOnlyFields(provider: "Huawei Push Kit")
        if case (let field, let why)? = n.firstFieldHMSCannotCarry {
            throw ValidationError(field: field, message: "cannot be sent to Huawei Push Kit: " + why)
        }
        if !n.category.isEmpty, !categories.contains(n.category) {
            throw ValidationError(
                field: "category",
                message: "must be one of Huawei's notification categories: "
                    + categories.sorted().joined(separator: ", "))
        }
        if let badge = n.badge, badge > 99 {
            throw ValidationError(field: "badge", message: "must be 0 to 99 for Huawei Push Kit (setNum)")
        }
        if api == .v3, n.priority != 0 {
            throw ValidationError(
                field: "priority", message: "has no place in a v3 message (Push Kit v3 has no urgency)")
        }
        if n.contentAvailable, hasAlert(n) {
            throw ValidationError(
                field: "content_available",
                message: "is for a data message (no alert): a Huawei notification is always shown")
        }
        if n.contentAvailable, n.dataJSON.isEmpty, n.payloadJSON.isEmpty {
            throw ValidationError(field: "data_json", message: "is required for a Huawei data (background) message")
        }
        let ttl = n.secondsToExpiration(now: now, within: 1...maxTTL)
        var pushType: String?
        let prefix: [UInt8]
        var rest: [UInt8]
        switch api {
        case .v3:
            prefix = Array(#"{"target":{"token":[""#.utf8)
            let payload: [UInt8]
            (payload, pushType) = n.payloadJSON.isEmpty ? try v3Payload(n) : try v3Verbatim(n)
            rest = Array(#""]},"payload":"#.utf8) + payload
            if let ttl { rest += Array(#","pushOptions":{"ttl":\#(ttl)}"#.utf8) }
            rest += Array("}".utf8)
        case .v2:
            prefix = Array(#"{"validate_only":false,"message":{"token":[""#.utf8)
            let members = n.payloadJSON.isEmpty ? try v2Members(n, ttl: ttl) : try v2Verbatim(n)
            rest = Array(#""]"#.utf8) + (members.isEmpty ? [] : Array(",".utf8) + members) + Array("}}".utf8)
        }
        let size = prefix.count + rest.count
        guard size <= maxBodyBytes else {
            throw ValidationError(
                field: n.payloadJSON.isEmpty ? "" : "payload_json",
                message: "the Huawei request body is \(size) bytes without its token; at most \(maxBodyBytes)")
        }
        return PreparedHMSMessage(
            bodyPrefix: prefix, bodySuffix: rest, pushType: pushType, expiration: ttl.map { now + $0 },
            tokens: n.tokens)
    }

    private static func data(_ n: NotificationRequest) throws(ValidationError) -> JSONValue? {
        guard !n.dataJSON.isEmpty else { return nil }
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONParser.parse(n.dataJSON.utf8)
        } catch {
            throw ValidationError(field: "data_json", message: error.description)
        }
        guard value.objectMembers != nil else {
            throw ValidationError(field: "data_json", message: "must be a JSON object")
        }
        return value
    }

    private static func hasAlert(_ n: NotificationRequest) -> Bool {
        let alert = n.alert ?? NotificationRequest.Alert()
        return !alert.title.isEmpty || !alert.body.isEmpty
    }

    /// `{"notification":{…}}` (push-type 0), or `{"extraData":"…"}` (push-type 6) for data alone.
    private static func v3Payload(_ n: NotificationRequest) throws(ValidationError) -> ([UInt8], String) {
        let data = try data(n)
        let alert = n.alert ?? NotificationRequest.Alert()
        var writer = JSONWriter(reservingCapacity: 256 + n.dataJSON.utf8.count)
        writer.beginObject()
        guard hasAlert(n) else {
            guard n.contentAvailable || data != nil, n.badge == nil, alert.image.isEmpty else {
                throw ValidationError(
                    field: "alert",
                    message: "title and body are required for a Huawei notification (or send data alone with "
                        + "content_available)")
            }
            writer.key("extraData")
            writer.string(n.dataJSON)
            writer.endObject()
            return (writer.bytes, "6")
        }
        guard !alert.title.isEmpty, !alert.body.isEmpty else {
            throw ValidationError(
                field: alert.title.isEmpty ? "alert.title" : "alert.body", message: "is required by Huawei Push Kit")
        }
        writer.key("notification")
        writer.beginObject()
        writer.member("category", string: n.category.isEmpty ? "MARKETING" : n.category)
        writer.member("title", string: alert.title)
        writer.member("body", string: alert.body)
        writer.key("clickAction")
        writer.beginObject()
        writer.key("actionType")
        writer.int(0)
        if let data {
            writer.key("data")
            writer.value(data)
        }
        writer.endObject()
        writer.member("image", nonEmpty: alert.image)
        if let badge = n.badge {
            writer.key("badge")
            writer.beginObject()
            writer.key("setNum")
            writer.int(badge)
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
        return (writer.bytes, "0")
    }

    /// `payload_json` as v3's `payload`: an object; push-type 6 when it holds nothing but `extraData`.
    private static func v3Verbatim(_ n: NotificationRequest) throws(ValidationError) -> ([UInt8], String) {
        let members = try verbatimMembers(n)
        let background = members.count == 1 && members[0].0 == "extraData"
        return (compact(.object(members)), background ? "6" : "0")
    }

    /// The members of v2's `message` after the token.
    private static func v2Members(_ n: NotificationRequest, ttl: Int64?) throws(ValidationError) -> [UInt8] {
        let data = try data(n)
        let alert = n.alert ?? NotificationRequest.Alert()
        var writer = JSONWriter(reservingCapacity: 256 + n.dataJSON.utf8.count)
        writer.beginObject()
        if !n.dataJSON.isEmpty { writer.member("data", string: n.dataJSON) }
        if !hasAlert(n) {
            guard n.contentAvailable || data != nil, n.badge == nil, alert.image.isEmpty else {
                throw ValidationError(
                    field: "alert",
                    message: "title and body are required for a Huawei notification (or send data alone with "
                        + "content_available)")
            }
        }
        writer.key("android")
        writer.beginObject()
        writer.member("category", nonEmpty: n.category)
        if n.priority != 0 { writer.member("urgency", string: n.priority == 10 ? "HIGH" : "NORMAL") }
        if let ttl { writer.member("ttl", string: "\(ttl)s") }
        if hasAlert(n) {
            guard !alert.title.isEmpty, !alert.body.isEmpty else {
                throw ValidationError(
                    field: alert.title.isEmpty ? "alert.title" : "alert.body", message: "is required by Huawei Push Kit"
                )
            }
            writer.key("notification")
            writer.beginObject()
            writer.member("title", string: alert.title)
            writer.member("body", string: alert.body)
            writer.member("image", nonEmpty: alert.image)
            if let badge = n.badge {
                writer.key("badge")
                writer.beginObject()
                writer.key("set_num")
                writer.int(badge)
                writer.endObject()
            }
            writer.key("click_action")
            writer.beginObject()
            writer.key("type")
            writer.int(3)
            writer.endObject()
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
        // The members without the object's braces: they follow the token.
        return Array(writer.bytes.dropFirst().dropLast())
    }

    /// `payload_json` as v2's `message` (without `token`, which the gateway sets per request).
    private static func v2Verbatim(_ n: NotificationRequest) throws(ValidationError) -> [UInt8] {
        let members = try verbatimMembers(n)
        if let target = members.first(where: { ["token", "topic", "condition"].contains($0.0) })?.0 {
            throw ValidationError(
                field: "payload_json",
                message: "must not contain \"\(target)\": the gateway sets the token for each request")
        }
        return Array(compact(.object(members)).dropFirst().dropLast())
    }

    private static func verbatimMembers(_ n: NotificationRequest) throws(ValidationError) -> [(String, JSONValue)] {
        if let field = n.firstHMSBuildingField {
            throw ValidationError(field: field, message: "must be empty when payload_json is set")
        }
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONParser.parse(n.payloadJSON.utf8)
        } catch {
            throw ValidationError(field: "payload_json", message: error.description)
        }
        guard let members = value.objectMembers, !members.isEmpty else {
            throw ValidationError(field: "payload_json", message: "must be a non-empty JSON object")
        }
        if members.contains(where: { $0.0 == "target" }) {
            throw ValidationError(
                field: "payload_json",
                message: "must not contain \"target\": the gateway sets the token for each request")
        }
        return members
    }

    private static func compact(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }
}

extension NotificationRequest {
    /// The first set field Huawei Push Kit has no place for, by its proto name, and why.
    var firstFieldHMSCannotCarry: (field: String, why: String)? {
        let none = "Push Kit's message has no such field; put what the app needs in data_json"
        if !id.isEmpty { return ("id", "Huawei names the request itself (the result's id)") }
        if !topic.isEmpty { return ("topic", "it is an APNs topic") }
        if pushType != nil { return ("push_type", "the message's kind follows from its fields") }
        if let field = alert?.firstAPNsOnlyField { return ("alert.\(field)", none) }
        if !sound.isEmpty { return ("sound", none) }
        if !threadID.isEmpty { return ("thread_id", none) }
        if mutableContent { return ("mutable_content", none) }
        if !interruptionLevel.isEmpty { return ("interruption_level", none) }
        if criticalSound != nil { return ("critical_sound", "critical alerts are APNs's") }
        if !collapseID.isEmpty { return ("collapse_id", "Push Kit's collapse key is a number Pushgate does not map") }
        return nil
    }

    /// The fields that build part of the body; with `payload_json` these must stay empty.
    var firstHMSBuildingField: String? {
        if !(alert?.isEmpty ?? true) { return "alert" }
        if badge != nil { return "badge" }
        if !category.isEmpty { return "category" }
        if !dataJSON.isEmpty { return "data_json" }
        return nil
    }
}
