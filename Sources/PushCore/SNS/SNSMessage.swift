/// The `Message` of an SNS-style publish, checked and split into its per-platform texts.
///
/// With `message_structure` empty the whole message is the `default` text. With `json` it is an
/// object whose known platform keys map to JSON *strings* (the platform payloads are themselves
/// JSON, encoded twice: docs/providers.md C.2).
public struct SNSMessage: Sendable, Equatable {
    /// SNS's publish limit: message plus attribute names and values, in UTF-8 bytes (docs/providers.md C.1).
    public static let maxPublishBytes = 262_144
    /// The keys whose values are kept. The VoIP keys are kept for a later PushKit path; other
    /// SNS keys (`BAIDU`, `email`, `sqs`, …) are ignored like unknown ones, whatever their value.
    public static let knownKeys: Set<String> = [
        "default", "APNS", "APNS_SANDBOX", "GCM", "ADM", "WEBPUSH", "HMS", "APNS_VOIP", "APNS_VOIP_SANDBOX",
    ]

    /// The `default` text, if the message has one.
    public var defaultText: String?
    /// The texts of the known platform keys present (`APNS`, `GCM`, `APNS_VOIP`, …), keyed as sent.
    public var platformTexts: [String: String]

    /// Creates a message from already split texts.
    public init(defaultText: String?, platformTexts: [String: String] = [:]) {
        self.defaultText = defaultText
        self.platformTexts = platformTexts
    }

    /// The text for `key`: its own entry if present, else `default`; nil if neither exists.
    /// `fromPlatformKey` tells a platform payload (JSON to send as is) from fallback text.
    public func text(for key: PlatformKey) -> (text: String, fromPlatformKey: Bool)? {
        if let own = platformTexts[key.rawValue] { return (own, true) }
        if let defaultText { return (defaultText, false) }
        return nil
    }

    /// Checks a publish's message and splits it by platform.
    ///
    /// - Parameters:
    ///   - message: the `message` field, UTF-8.
    ///   - structure: the `message_structure` field: `""` (plain text) or `"json"`.
    ///   - target: a topic needs `default`; an endpoint needs `default` or its own platform key.
    ///   - attributes: the publish's message attributes; SNS counts their names and values
    ///     toward the 256 KB limit, so they are needed here for the size check only.
    /// - Throws: ``ValidationError`` naming `message` or `message_structure`, or `message.GCM…`
    ///   for a GCM value that is not a usable FCM message.
    public static func parse(
        message: String, structure: String, target: SNSTarget, attributes: [String: String]
    ) throws(ValidationError) -> SNSMessage {
        try checkSize(message: message, attributes: attributes)
        switch structure {
        case "":
            // SNS refuses an empty Message ("Empty message"); a push with no text is a mistake.
            guard !message.isEmpty else { throw ValidationError(field: "message", message: "must not be empty") }
            return SNSMessage(defaultText: message)
        case "json":
            return try parseJSON(message, target: target)
        default:
            throw ValidationError(
                field: "message_structure", message: "must be empty or \"json\", got \"\(structure)\"")
        }
    }

    /// Rejects a publish over 256 KB, counting attribute names and values as SNS does.
    static func checkSize(message: String, attributes: [String: String]) throws(ValidationError) {
        var total = message.utf8.count
        for (name, value) in attributes { total += name.utf8.count + value.utf8.count }
        guard total <= maxPublishBytes else {
            throw ValidationError(
                field: "message",
                message: "message and attributes are \(total) bytes, over the SNS limit of \(maxPublishBytes) bytes")
        }
    }
}
