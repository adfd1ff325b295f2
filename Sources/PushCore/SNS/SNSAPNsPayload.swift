/// Turns a published SNS message into what an APNs send needs, once per (message, platform key).
///
/// The result has no tokens: the fan-out copies it per page of endpoints and fills them in, so
/// the payload bytes are built once however many devices receive them.
public enum SNSAPNsPayload {
    /// Builds the APNs notification for `key`, or nil when the message's TTL has run out.
    ///
    /// - Parameters:
    ///   - message: the parsed publish; the `key` entry is the payload (a JSON object sent verbatim),
    ///     else `default` becomes `{"aps":{"alert":"<text>"}}`.
    ///   - key: `.apns` or `.apnsSandbox`; another key is a programming error.
    ///   - options: the reserved attributes for `key` (``SNSAttributes/parse(_:platformKey:)``).
    ///   - bundleID: the app's bundle id, the topic unless the TOPIC attribute is set.
    ///   - publishedAt: when the publish was accepted, Unix seconds; TTLs count from here.
    ///   - now: the current time, Unix seconds.
    /// - Returns: nil if `now` is past `publishedAt + TTL`: SNS drops a push whose dwell time
    ///   exceeds its TTL (docs/providers.md C.4), and the caller counts it as skipped.
    /// - Throws: ``ValidationError`` naming `message` or the attribute at fault. Checks run before
    ///   the expiry test, so a bad publish fails the same way whatever the time.
    public static func build(
        message: SNSMessage, key: PlatformKey, options: SNSDeliveryOptions, bundleID: String,
        publishedAt: Int64, now: Int64
    ) throws(ValidationError) -> PreparedNotification? {
        let checked = try checked(message: message, key: key, options: options, bundleID: bundleID)
        guard let expiration = expiration(ttl: options.ttlSeconds, publishedAt: publishedAt, now: now) else {
            return nil
        }
        return PreparedNotification(
            payload: checked.payload, pushType: checked.pushType, topic: checked.topic ?? "",
            priority: checked.priority, expiration: expiration.header, collapseID: options.collapseID, apnsID: nil,
            tokens: [])
    }

    /// Runs ``build(message:key:options:bundleID:publishedAt:now:)``'s checks for any app of `key`:
    /// how Publish refuses a message before the fan-out builds it per app. Only the default topic
    /// is left unchecked, as the app's bundle id makes it (checked when the configuration loads).
    public static func check(message: SNSMessage, key: PlatformKey, options: SNSDeliveryOptions)
        throws(ValidationError)
    {
        _ = try checked(message: message, key: key, options: options, bundleID: nil)
    }

    /// The payload and headers, checked in field order (payload, priority, topic, then the size);
    /// the topic is nil when `bundleID` is (no app yet).
    private static func checked(
        message: SNSMessage, key: PlatformKey, options: SNSDeliveryOptions, bundleID: String?
    ) throws(ValidationError) -> (payload: [UInt8], pushType: PushType, priority: Int, topic: String?) {
        precondition(key == .apns || key == .apnsSandbox, "SNSAPNsPayload serves the APNs platform keys only")
        let (payload, document) = try payloadBytes(message: message, key: key)
        let pushType = options.pushType ?? SNSPushTypeInference.infer(fromPayload: document)
        let priority = try priority(options.priority, pushType: pushType)
        let topic = try topic(options.topic, bundleID: bundleID, pushType: pushType)
        guard payload.count <= pushType.maxPayloadBytes else {
            throw ValidationError(
                field: "message",
                message: "the APNs payload for '\(key.rawValue)' is \(payload.count) bytes, over the limit of "
                    + "\(pushType.maxPayloadBytes) bytes for push type \(pushType.rawValue)")
        }
        return (payload, pushType, priority, topic)
    }

    /// The payload bytes and their parsed form (for push-type inference).
    static func payloadBytes(message: SNSMessage, key: PlatformKey) throws(ValidationError)
        -> ([UInt8], JSONValue)
    {
        guard let entry = message.text(for: key) else {
            throw ValidationError(
                field: "message", message: "JSON must contain an entry for 'default' or '\(key.rawValue)'")
        }
        guard entry.fromPlatformKey else {
            let document = JSONValue.object([("aps", .object([("alert", .string(entry.text))]))])
            return (JSONWriter.encode(document), document)
        }
        let document: JSONValue
        do throws(JSONError) {
            document = try JSONParser.parse(entry.text.utf8)
        } catch {
            throw ValidationError(field: "message", message: "the '\(key.rawValue)' value is not valid JSON: \(error)")
        }
        guard document.objectMembers != nil else {
            throw ValidationError(field: "message", message: "the '\(key.rawValue)' value must be a JSON object")
        }
        // Verbatim: the sender's bytes (key order, number spelling, whitespace) reach APNs unchanged.
        return (Array(entry.text.utf8), document)
    }
}
