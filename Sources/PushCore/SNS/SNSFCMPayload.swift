/// Turns a published SNS message into an FCM HTTP v1 message, once per message.
///
/// The result has no tokens: the fan-out copies it per page of endpoints and fills them in, so
/// the body is built once however many devices receive it. What becomes the v1 `message`
/// (docs/providers.md B.7, C.2-C.4):
///
/// * a `GCM` entry `{"fcmV1Message":{"message":{…}}}`: that message (its `validate_only` is
///   ignored: SNS delivers or doesn't, it has no dry run per endpoint);
/// * any other `GCM` object: the legacy format, translated (``legacyMessage(_:)``);
/// * only `default`: the data message `{"data":{"default":"<text>"}}`, as SNS sends it.
///
/// TTL (docs/providers.md C.4): `AWS.SNS.MOBILE.FCM.TTL` wins over the payload's own TTL (`android.ttl` or legacy
/// `time_to_live`) and replaces it; either counts from the publish, so what is sent is what
/// remains, and a message whose TTL has run out is not sent at all.
public enum SNSFCMPayload {
    /// The error field for problems in the `GCM` value.
    static let field = "message.GCM"

    /// Builds the FCM message for a publish, or nil when its TTL has run out.
    ///
    /// - Parameters:
    ///   - message: the parsed publish; its `GCM` entry, else `default`, is the payload.
    ///   - attributes: the publish's message attributes; all are checked
    ///     (``SNSAttributes/parse(_:platformKey:)``) and `AWS.SNS.MOBILE.FCM.TTL` is used.
    ///   - publishedAt: when the publish was accepted, Unix seconds; TTLs count from here.
    ///   - now: the current time, Unix seconds.
    /// - Returns: the message with `tokens: []`, its ``PreparedFCMMessage/expiration`` the end of
    ///   the TTL (nil without one); nil if `now` is past `publishedAt + TTL` (SNS drops a push
    ///   whose dwell time exceeds its TTL, docs/providers.md C.4; a TTL of 0 is never past, see
    ///   ``FCMDuration/remaining(after:)``).
    /// - Throws: ``ValidationError`` naming `message.GCM` (or a member of it), `message`, or the
    ///   attribute at fault. Checks run before the expiry test, so a bad publish fails the same way
    ///   whatever the time.
    public static func build(
        message: SNSMessage, attributes: [String: String], publishedAt: Int64, now: Int64
    ) throws(ValidationError) -> PreparedFCMMessage? {
        let body = try body(message: message, attributes: attributes, elapsed: now - publishedAt)
        if body.ttl != nil, body.left == nil { return nil }
        return PreparedFCMMessage(
            bodyPrefix: body.prefix, bodySuffix: body.suffix, expiration: body.left.map { now + $0.secondsRoundedUp },
            tokens: [])
    }

    /// Runs ``build(message:attributes:publishedAt:now:)``'s checks on a message just published
    /// (sized with its whole TTL): how Publish refuses a message before the fan-out builds it.
    public static func check(message: SNSMessage, attributes: [String: String]) throws(ValidationError) {
        _ = try body(message: message, attributes: attributes, elapsed: 0)
    }

    /// The checked body halves, `elapsed` seconds after the publish, with the TTL and what is left
    /// of it (nil left of a TTL: expired).
    private static func body(message: SNSMessage, attributes: [String: String], elapsed: Int64)
        throws(ValidationError) -> (prefix: [UInt8], suffix: [UInt8], ttl: FCMDuration?, left: FCMDuration?)
    {
        let options = try SNSAttributes.parse(attributes, platformKey: .gcm)
        guard let entry = message.text(for: .gcm) else {
            throw ValidationError(field: "message", message: "JSON must contain an entry for 'default' or 'GCM'")
        }
        var built = entry.fromPlatformKey ? try gcmMessage(entry.text) : defaultMessage(text: entry.text)
        // An attribute TTL beyond FCM's 4 weeks is clamped: FCM would keep it no longer anyway.
        let ttl = options.ttlSeconds.map { FCMDuration(seconds: min($0, FCMDuration.maxTTL.seconds)) } ?? built.ttl
        let left = ttl.flatMap { $0.remaining(after: elapsed) }
        // An expired message is still sized (with its full TTL) so errors don't depend on timing.
        if let written = left ?? ttl { built.setAndroidTTL(written) }
        let (prefix, suffix) = FCMMessageRules.split(rest: JSONWriter.encode(.object(built.members)))
        try FCMMessageRules.checkSize(prefix: prefix, suffix: suffix, field: entry.fromPlatformKey ? field : "message")
        return (prefix, suffix, ttl, left)
    }

    /// The data message an Android app receives when only `default` reaches it (docs/providers.md C.3):
    /// `{"data":{"default":"<text>"}}`, read with `remoteMessage.getData().get("default")`.
    /// No `notification` block, so nothing shows unless the app builds it, as with SNS.
    public static func defaultData(text: String) -> [UInt8] {
        JSONWriter.encode(.object(defaultMessage(text: text).members))
    }

    /// The rest of a v1 `message` (everything but the target) and its `android.ttl`.
    struct Message {
        var members: [(String, JSONValue)]
        var ttl: FCMDuration?

        /// Sets `android.ttl`, replacing the one given or adding it after the other members.
        mutating func setAndroidTTL(_ ttl: FCMDuration) {
            let value = JSONValue.string(ttl.description)
            guard let index = members.firstIndex(where: { $0.0 == "android" }),
                var android = members[index].1.objectMembers
            else {
                members.append(("android", .object([("ttl", value)])))
                return
            }
            if let ttlIndex = android.firstIndex(where: { $0.0 == "ttl" }) {
                android[ttlIndex].1 = value
            } else {
                android.append(("ttl", value))
            }
            members[index].1 = .object(android)
        }
    }

    static func defaultMessage(text: String) -> Message {
        Message(members: [("data", .object([("default", .string(text))]))])
    }

    /// The `GCM` value: `fcmV1Message` or legacy, checked.
    static func gcmMessage(_ text: String) throws(ValidationError) -> Message {
        let document = try parseGCM(text)
        guard let v1 = document["fcmV1Message"] else { return try legacyMessage(document.objectMembers ?? []) }
        let v1Field = "\(field).fcmV1Message"
        guard v1.objectMembers != nil else {
            throw ValidationError(field: v1Field, message: "must be a JSON object holding \"message\"")
        }
        guard let members = v1["message"]?.objectMembers else {
            throw ValidationError(
                field: "\(v1Field).message", message: "must be a JSON object: the FCM v1 message without its target")
        }
        let ttl = try FCMMessageRules.checkMessage(members, field: "\(v1Field).message")
        return Message(members: members, ttl: ttl)
    }

    /// Parses the `GCM` text, which must be a JSON object. Publish checks this too
    /// (``SNSMessage/parse(message:structure:target:attributes:)``).
    static func parseGCM(_ text: String) throws(ValidationError) -> JSONValue {
        .object(
            try JSONParser.parseObject(text, field: field, expected: " (legacy FCM format or {\"fcmV1Message\":{…}})"))
    }
}
