/// One batch of events as POSTed to a webhook (docs/webhooks.md): the body built once; the webhook's
/// dialect signs each attempt. Its one "token" is the batch's `Pushgate-Delivery` id, so the engine's
/// per-token result is the batch's.
public struct PreparedWebhookPost: Sendable, Equatable {
    /// The `Pushgate-Delivery` id, the same on every attempt of the batch.
    public var deliveryID: String
    /// `:authority` and `:path` of the webhook's URL.
    public var authority: String
    public var path: String
    /// `{"events": [...]}`.
    public var body: [UInt8]
    /// Unix seconds after which the engine stops retrying the batch (the outbox sends it again).
    public var expiration: Int64?

    public init(
        deliveryID: String, authority: String, path: String, body: [UInt8], expiration: Int64?
    ) {
        self.deliveryID = deliveryID
        self.authority = authority
        self.path = path
        self.body = body
        self.expiration = expiration
    }
}
