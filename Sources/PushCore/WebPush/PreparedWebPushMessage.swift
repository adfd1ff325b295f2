/// A validated Web Push message, computed once and shared by all of its subscriptions: the
/// plaintext and the headers that are the same for every subscriber. Per subscription the
/// gateway still encrypts (RFC 8291: a fresh key and salt for each) and writes the endpoint's
/// path, origin and VAPID token.
public struct PreparedWebPushMessage: Sendable, Equatable {
    /// What the service worker receives (`event.data`), before encryption.
    public var plaintext: [UInt8]
    /// The `TTL` header: seconds the push service may keep the message for an offline browser.
    public var ttl: Int64
    /// The `Urgency` header (`very-low`, `low`, `normal`, `high`); empty: not sent (the
    /// service's default, `normal`).
    public var urgency: String
    /// The `Topic` header (a pending message with the same topic is replaced); empty: none.
    public var topic: String
    /// Unix seconds after which the push service would drop it anyway (`now + ttl`): no retry
    /// past this.
    public var expiration: Int64?
    /// The subscriptions (each a `PushSubscription.toJSON()` text), in request order.
    public var tokens: [String]

    public init(
        plaintext: [UInt8], ttl: Int64, urgency: String, topic: String, expiration: Int64?, tokens: [String]
    ) {
        self.plaintext = plaintext
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
        self.expiration = expiration
        self.tokens = tokens
    }
}
