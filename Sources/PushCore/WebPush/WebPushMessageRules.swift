/// The limits and header values of a Web Push message (docs/providers.md F.3, F.6).
public enum WebPushMessageRules {
    /// The largest plaintext that fits in the one 4,096-byte `aes128gcm` record every push
    /// service must accept (RFC 8291 §4): 4,096 less the 86-byte header, the 16-byte tag and the
    /// delimiter.
    public static let maxPlaintextBytes = 3993
    /// The `TTL` sent when a notification sets no `expiration`: four weeks, the longest FCM
    /// keeps a message (longer TTLs are cut to what each service keeps).
    public static let defaultTTL: Int64 = 2_419_200
    /// The longest `TTL` sent; an expiration further away is cut to it.
    public static let maxTTL: Int64 = 2_419_200
    /// `Urgency` values (RFC 8030 §5.3), lowest first.
    public static let urgencies = ["very-low", "low", "normal", "high"]
    /// A `Topic` is at most 32 characters of the URL-safe base64 alphabet (RFC 8030 §5.4).
    public static let maxTopicCharacters = 32

    /// The `Urgency` for a notification's `priority` when `urgency` is not given: 10 → high,
    /// 5 → normal, 1 → low, 0 → none sent.
    public static func urgency(forPriority priority: Int32) -> String {
        switch priority {
        case 10: "high"
        case 5: "normal"
        case 1: "low"
        default: ""
        }
    }

    /// Whether `topic` may be sent as a `Topic` header. A length of 1 more than a multiple of 4
    /// is refused too: it cannot be base64, and Apple answers it `BadWebPushTopic` (F.3).
    public static func isValidTopic(_ topic: String) -> Bool {
        let bytes = topic.utf8
        return !bytes.isEmpty && bytes.count <= maxTopicCharacters && bytes.count % 4 != 1
            && bytes.allSatisfy { TokenShape.isAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
    }
}
