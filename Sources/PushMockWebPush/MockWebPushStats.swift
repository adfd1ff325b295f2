public import PushMockSupport

/// An accepted (201) push as the mock received it.
public struct MockWebPushMessage: Sendable {
    /// Which connection (numbered from 1 in accept order) and stream carried it.
    public let connectionID: Int
    public let streamID: Int32
    /// The message id of the answer's `Location` (`https://<authority>/m/<id>`).
    public let messageID: String
    public let subscriptionID: String
    /// `TTL` as echoed (autopush caps it at 30 days), `Urgency` and `Topic` as sent.
    public let ttl: Int
    public let urgency: String?
    public let topic: String?
    /// The VAPID token's claims and the JWT itself.
    public let vapidAudience: String
    public let vapidSubject: String?
    public let vapidExpiry: Int64
    public let vapidJWT: String
    /// The decrypted message; nil when the push had no body or was not decrypted
    /// (`decryptEvery`).
    public let plaintext: [UInt8]?
    /// The request body as received (the `aes128gcm` bytes).
    public let body: [UInt8]

    /// ``plaintext`` as UTF-8 text, nil when absent or not valid UTF-8.
    public var plaintextString: String? { plaintext.flatMap { String(validating: $0, as: UTF8.self) } }
}

/// A snapshot of what a ``MockWebPushServer`` has seen since it started (or since `resetStats`).
///
/// Counters are updated before the response is handed to HTTP: by the time a client has read a
/// response, the snapshot counts it.
public struct MockWebPushStats: MockServerStats, Sendable {
    /// Connections, streams, answers by status and by error (``MockWebPushServer``'s error keys:
    /// `NoTTL`, `VapidExpired`, `DecryptionFailed`, …). Read through the stats
    /// (`stats.count(error: "NoTTL")`).
    public var counters = MockServerCounters()

    /// Requests to `/wpush/v2/…`.
    public var pushRequests = 0
    /// 201 answers, and how many of those pushes were decrypted (and read).
    public var delivered = 0
    public var decrypted = 0
    /// Subscriptions handed out by `POST /_mock/subscriptions`.
    public var subscriptionsIssued = 0
    /// Distinct VAPID JWTs that verified, by their `aud`.
    public var vapidTokensByAudience: [String: Int] = [:]
    /// The last accepted pushes, oldest first (at most `recordMessages`).
    public var recentMessages: [MockWebPushMessage] = []

    public init() {}

    /// One line for logs.
    public var summary: String {
        counters.answerSummary + " pushes=\(pushRequests) delivered=\(delivered) decrypted=\(decrypted)"
            + " vapid_tokens=\(vapidTokensByAudience.values.reduce(0, +)) subscriptions_issued=\(subscriptionsIssued) "
            + counters.connectionSummary
    }
}
