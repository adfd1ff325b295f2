/// Turns a published SNS message into an ADM send body, once per message.
///
/// The result has no tokens: the fan-out copies it per page of endpoints and fills them in, so
/// the body is built once however many Fire devices receive it. What becomes the body
/// (docs/providers.md C.2-C.4):
///
/// * an `ADM` entry: that object, `{"data":{…},"consolidationKey":…,"expiresAfter":…}`, checked as
///   a Send's `payload_json` is (``ADMMessageRules``) and re-serialised compactly. SNS passes it to
///   ADM as it is, so `data` values must already be strings: a number or object is refused here
///   (ADM would answer `InvalidData` at every endpoint), not stringified as the legacy GCM format
///   is, because SNS documents no such translation for ADM;
/// * only `default`: the data message `{"data":{"default":"<text>"}}`, as SNS sends it, read by the
///   app with `intent.getExtras().getString("default")`.
///
/// TTL (docs/providers.md C.4): `AWS.SNS.MOBILE.ADM.TTL` wins over the body's `expiresAfter` and replaces it. Either
/// counts from the publish, so what is sent is what remains (at least 1 second, at most ADM's 30
/// days); a message whose dwell time exceeds its TTL is not sent at all, and neither is one with a
/// TTL of 0, which for ADM means "drop" (only APNs and FCM give 0 a meaning). Without either, no
/// `expiresAfter` is sent and ADM keeps the message for its default week.
public enum SNSADMPayload {
    /// The error field for problems in the `ADM` value.
    static let field = "message.ADM"

    /// Builds the ADM body for a publish, or nil when its TTL has run out.
    ///
    /// - Parameters:
    ///   - message: the parsed publish; its `ADM` entry, else `default`, is the payload.
    ///   - attributes: the publish's message attributes; all are checked
    ///     (``SNSAttributes/parse(_:platformKey:)``) and `AWS.SNS.MOBILE.ADM.TTL` is used.
    ///   - publishedAt: when the publish was accepted, Unix seconds; TTLs count from here.
    ///   - now: the current time, Unix seconds.
    /// - Returns: the message with `tokens: []` and ``PreparedADMMessage/expiration`` at
    ///   `now + expiresAfter` (nil without a TTL); nil when the TTL has run out.
    /// - Throws: ``ValidationError`` naming `message.ADM` (or a member of it), `message`, or the
    ///   attribute at fault. Checks run before the expiry test, so a bad publish fails the same way
    ///   whatever the time.
    public static func build(
        message: SNSMessage, attributes: [String: String], publishedAt: Int64, now: Int64
    ) throws(ValidationError) -> PreparedADMMessage? {
        let body = try body(message: message, attributes: attributes, elapsed: now - publishedAt)
        if body.ttl != nil, body.left == nil { return nil }
        return PreparedADMMessage(body: body.bytes, expiration: body.left.map { now + $0 }, tokens: [])
    }

    /// Runs ``build(message:attributes:publishedAt:now:)``'s checks on a message just published
    /// (sized with its whole TTL): how Publish refuses a message before the fan-out builds it.
    public static func check(message: SNSMessage, attributes: [String: String]) throws(ValidationError) {
        _ = try body(message: message, attributes: attributes, elapsed: 0)
    }

    /// The checked body `elapsed` seconds after the publish, with the TTL and the `expiresAfter`
    /// left of it (nil left of a TTL: not to be sent).
    private static func body(message: SNSMessage, attributes: [String: String], elapsed: Int64)
        throws(ValidationError) -> (bytes: [UInt8], ttl: Int64?, left: Int64?)
    {
        let options = try SNSAttributes.parse(attributes, platformKey: .adm)
        guard let entry = message.text(for: .adm) else {
            throw ValidationError(field: "message", message: "JSON must contain an entry for 'default' or 'ADM'")
        }
        var members = entry.fromPlatformKey ? try parseADM(entry.text) : defaultMembers(text: entry.text)
        let bodyTTL = entry.fromPlatformKey ? try ADMMessageRules.checkBody(members, field: field) : nil
        let ttl = options.ttlSeconds ?? bodyTTL
        let left = ttl.flatMap { remaining(ttl: $0, elapsed: elapsed) }
        // An expired message is still sized (with its full TTL) so errors don't depend on timing.
        if let written = left ?? ttl { setExpiresAfter(written, in: &members) }
        let bytes = JSONWriter.encode(.object(members))
        try ADMMessageRules.checkSize(bytes, field: entry.fromPlatformKey ? field : "message")
        return (bytes, ttl, left)
    }

    /// The data message a Fire app receives when only `default` reaches it:
    /// `{"data":{"default":"<text>"}}`.
    public static func defaultData(text: String) -> [UInt8] {
        JSONWriter.encode(.object(defaultMembers(text: text)))
    }

    /// Parses the `ADM` text, which must be a JSON object. Publish checks this too
    /// (``SNSMessage/parse(message:structure:target:attributes:)``).
    static func parseADM(_ text: String) throws(ValidationError) -> [(String, JSONValue)] {
        try ADMMessageRules.parseBody(text, field: field)
    }

    /// The `expiresAfter` left of a TTL after `elapsed` seconds, within ADM's 1 second to 30 days;
    /// nil when the message must not be sent (TTL 0, or a dwell time beyond it).
    static func remaining(ttl: Int64, elapsed: Int64) -> Int64? {
        let elapsed = max(0, elapsed)
        guard ttl > 0, elapsed <= ttl else { return nil }
        return min(max(ttl - elapsed, ADMMessageRules.minExpiresAfter), ADMMessageRules.maxExpiresAfter)
    }

    private static func defaultMembers(text: String) -> [(String, JSONValue)] {
        [("data", .object([("default", .string(text))]))]
    }

    /// Sets `expiresAfter`, replacing the one given or adding it after the other members.
    private static func setExpiresAfter(_ seconds: Int64, in members: inout [(String, JSONValue)]) {
        let value = JSONValue.number(String(seconds))
        if let index = members.firstIndex(where: { $0.0 == "expiresAfter" }) {
            members[index].1 = value
        } else {
            members.append(("expiresAfter", value))
        }
    }
}
