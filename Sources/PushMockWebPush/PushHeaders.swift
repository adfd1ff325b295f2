import PushMockSupport

/// The RFC 8030 headers of a push, checked as autopush checks them (autoendpoint's
/// `NotificationHeaders`), plus `Urgency`, which autopush does not check.
struct PushHeaders: Sendable {
    /// Seconds, capped at 30 days as autopush caps it (silently; the cap is what is echoed).
    let ttl: Int
    let urgency: String?
    let topic: String?

    static let maxTTL = 30 * 86_400
    static let urgencies: Set<String> = ["very-low", "low", "normal", "high"]
    static let maxTopicLength = 32

    /// The headers of `request`, or the refusal: `TTL` missing or not an integer (400 errno 111)
    /// or negative (errno 114); on a body, `Content-Encoding` other than `aes128gcm` (errno 110);
    /// `Topic` over 32 characters or outside the base64url alphabet (errno 113); `Urgency` not one
    /// of RFC 8030's four (mock only).
    static func read(_ request: MockRequest) -> Result<PushHeaders, WebPushRefusal> {
        guard let text = request.headers["ttl"], let ttl = Int(text) else {
            return .failure(WebPushRefusal(.noTTL, "Missing TTL value"))
        }
        guard ttl >= 0 else { return .failure(WebPushRefusal(.invalidTTL, "TTL must be greater than 0")) }
        if request.bodyLength > 0 {
            switch request.headers["content-encoding"] {
            case nil:
                return .failure(WebPushRefusal(.invalidEncryption, "Missing Content-Encoding header"))
            case "aes128gcm":
                break
            case "aesgcm":
                // autopush still accepts draft-04 `aesgcm` (salt in Encryption, dh in Crypto-Key).
                return .failure(
                    WebPushRefusal(
                        .invalidEncryption,
                        "Content-Encoding aesgcm (draft-ietf-webpush-encryption-04) is not supported by this mock; use aes128gcm (RFC 8291)"
                    ))
            default:
                return .failure(WebPushRefusal(.invalidEncryption, "Unknown Content-Encoding header"))
            }
        }
        let topic = request.headers["topic"]
        if let topic {
            guard topic.utf8.count <= maxTopicLength else {
                return .failure(WebPushRefusal(.invalidTopic, "Topic must be no greater than 32 characters"))
            }
            // autopush's pattern: base64url characters, then optional `=` padding.
            let body = topic.utf8.prefix { $0 != UInt8(ascii: "=") }
            guard !body.isEmpty, body.allSatisfy(SubscriptionID.isIDByte),
                topic.utf8.dropFirst(body.count).allSatisfy({ $0 == UInt8(ascii: "=") })
            else {
                return .failure(WebPushRefusal(.invalidTopic, "Topic must be URL and Filename safe Base64 alphabet"))
            }
        }
        let urgency = request.headers["urgency"]
        if let urgency, !urgencies.contains(urgency) {
            return .failure(
                WebPushRefusal(
                    .invalidUrgency, "Urgency must be very-low, low, normal or high (RFC 8030 §5.3), got \(urgency)"))
        }
        return .success(PushHeaders(ttl: min(ttl, maxTTL), urgency: urgency, topic: topic))
    }
}
