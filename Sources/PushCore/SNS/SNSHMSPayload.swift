/// Turns a published SNS message into a Huawei Push Kit message, once per message and API.
///
/// * an `HMS` entry (Pushgate's own key, like `WEBPUSH`): a JSON object with `title` and `body`
///   (a notification) and/or `data` (an object, for the app: `clickAction.data` on v3, `message.data`
///   on v2; alone, a data message), built as a Send's fields are (``HMSMessageBuilder``);
/// * only `default`: the data message `{"default":"<text>"}`, as SNS sends `default` to GCM and ADM.
///
/// TTL: `AWS.SNS.MOBILE.HMS.TTL` (named like SNS's own) counts from the publish; what is left is
/// sent, and a message past it is not sent at all.
public enum SNSHMSPayload {
    static let field = "message.HMS"

    public static func build(
        message: SNSMessage, attributes: [String: String], api: HMSAPI, publishedAt: Int64, now: Int64
    ) throws(ValidationError) -> PreparedHMSMessage? {
        let (options, notification) = try notification(message: message, attributes: attributes)
        var n = notification
        if let ttl = options.ttlSeconds {
            let left = ttl - max(0, now - publishedAt)
            guard left > 0 else { return nil }
            n.expiration = now + left
        }
        return try ValidationError.result(at: field) { () throws(ValidationError) in
            try HMSMessageBuilder.message(n, api: api, now: now)
        }.get()
    }

    /// Runs the checks of ``build(message:attributes:api:publishedAt:now:)`` for a message just published.
    public static func check(message: SNSMessage, attributes: [String: String]) throws(ValidationError) {
        for api in [HMSAPI.v3, .v2] {
            _ = try build(message: message, attributes: attributes, api: api, publishedAt: 0, now: 0)
        }
    }

    private static func notification(message: SNSMessage, attributes: [String: String]) throws(ValidationError)
        -> (SNSDeliveryOptions, NotificationRequest)
    {
        let options = try SNSAttributes.parse(attributes, platformKey: .hms)
        guard let entry = message.text(for: .hms) else {
            throw ValidationError(field: "message", message: "JSON must contain an entry for 'default' or 'HMS'")
        }
        var n = NotificationRequest()
        guard entry.fromPlatformKey else {
            n.contentAvailable = true
            n.dataJSON = String(decoding: JSONWriter.encode(.object([("default", .string(entry.text))])), as: UTF8.self)
            return (options, n)
        }
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONParser.parse(entry.text.utf8)
        } catch {
            throw ValidationError(field: field, message: error.description)
        }
        guard let members = value.objectMembers else {
            throw ValidationError(field: field, message: "must be a JSON object")
        }
        var alert = NotificationRequest.Alert()
        for (key, member) in members {
            switch (key, member) {
            case ("title", .string(let text)): alert.title = text
            case ("body", .string(let text)): alert.body = text
            case ("data", .object):
                n.dataJSON = String(decoding: JSONWriter.encode(member), as: UTF8.self)
            default:
                throw ValidationError(
                    field: "\(field).\(key)",
                    message: "unknown or of the wrong type: HMS takes title, body (strings) and data (an object)")
            }
        }
        if alert.title.isEmpty && alert.body.isEmpty {
            n.contentAvailable = true
        } else {
            n.alert = alert
        }
        return (options, n)
    }
}
