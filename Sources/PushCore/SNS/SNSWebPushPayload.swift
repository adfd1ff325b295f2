/// Turns a published SNS message into a Web Push message, once per message (encrypted per
/// subscriber later, by the sender).
///
/// What a browser's service worker receives (`event.data`):
///
/// * a `WEBPUSH` entry (Pushgate's own key; SNS has none): that text as it is, which must be JSON
///   and fit one record (``WebPushMessageRules/maxPlaintextBytes``);
/// * only `default`: `{"body":"<text>"}`, the shape a Send builds from `alert.body`
///   (``WebPushMessageBuilder``).
///
/// TTL: `AWS.SNS.MOBILE.WEBPUSH.TTL` (named like SNS's own) counts from the publish; what is sent
/// is what remains, and a message past it is not sent. `0` is Web Push's "now or never". Without
/// it, the Send default (``WebPushMessageRules/defaultTTL``) counts from the publish too. No
/// `Urgency` or `Topic` is sent: SNS has no attribute for them.
public enum SNSWebPushPayload {
    static let field = "message.WEBPUSH"

    /// Builds the message for a publish, or nil when its TTL has run out (see the type's notes).
    public static func build(
        message: SNSMessage, attributes: [String: String], publishedAt: Int64, now: Int64
    ) throws(ValidationError) -> PreparedWebPushMessage? {
        let (options, plaintext) = try plaintext(message: message, attributes: attributes)
        let ttl = min(options.ttlSeconds ?? WebPushMessageRules.defaultTTL, WebPushMessageRules.maxTTL)
        let elapsed = max(0, now - publishedAt)
        guard elapsed <= ttl else { return nil }
        let left = ttl - elapsed
        return PreparedWebPushMessage(
            plaintext: plaintext, ttl: left, urgency: "", topic: "", expiration: now + left, tokens: [])
    }

    /// Runs ``build(message:attributes:publishedAt:now:)``'s checks: how Publish refuses a message
    /// before the fan-out builds it.
    public static func check(message: SNSMessage, attributes: [String: String]) throws(ValidationError) {
        _ = try plaintext(message: message, attributes: attributes)
    }

    /// The attributes and the checked plaintext.
    private static func plaintext(message: SNSMessage, attributes: [String: String])
        throws(ValidationError) -> (SNSDeliveryOptions, [UInt8])
    {
        let options = try SNSAttributes.parse(attributes, platformKey: .webpush)
        guard let entry = message.text(for: .webpush) else {
            throw ValidationError(field: "message", message: "JSON must contain an entry for 'default' or 'WEBPUSH'")
        }
        guard !entry.fromPlatformKey else {
            try checkWebPush(entry.text)
            return (options, Array(entry.text.utf8))
        }
        let plaintext = JSONWriter.encode(.object([("body", .string(entry.text))]))
        guard plaintext.count <= WebPushMessageRules.maxPlaintextBytes else {
            throw ValidationError(
                field: "message",
                message: "the Web Push message is \(plaintext.count) bytes; at most "
                    + "\(WebPushMessageRules.maxPlaintextBytes) fit in the 4096-byte encrypted body")
        }
        return (options, plaintext)
    }

    /// Checks a `WEBPUSH` text: JSON, and small enough. Publish checks this too
    /// (``SNSMessage/parse(message:structure:target:attributes:)``).
    static func checkWebPush(_ text: String) throws(ValidationError) {
        do throws(JSONError) {
            _ = try JSONParser.parse(text.utf8)
        } catch {
            throw ValidationError(field: field, message: "not valid JSON: \(error)")
        }
        guard text.utf8.count <= WebPushMessageRules.maxPlaintextBytes else {
            throw ValidationError(
                field: field,
                message: "is \(text.utf8.count) bytes; at most \(WebPushMessageRules.maxPlaintextBytes) fit in the "
                    + "4096-byte encrypted body")
        }
    }
}
