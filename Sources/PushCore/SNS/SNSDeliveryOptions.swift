/// What the reserved `AWS.SNS.MOBILE.*` message attributes ask of one platform's deliveries
/// (docs/providers.md C.4). Nil means the attribute was not given.
public struct SNSDeliveryOptions: Sendable, Equatable {
    /// `AWS.SNS.MOBILE.APNS.PUSH_TYPE`.
    public var pushType: PushType?
    /// `AWS.SNS.MOBILE.APNS.PRIORITY`: 1, 5 or 10.
    public var priority: Int?
    /// `AWS.SNS.MOBILE.APNS.TOPIC`.
    public var topic: String?
    /// `AWS.SNS.MOBILE.APNS.COLLAPSE_ID`, at most 64 bytes.
    public var collapseID: String?
    /// The TTL attribute of the platform asked for (`APNS.TTL`, `APNS_SANDBOX.TTL`, `FCM.TTL` or `ADM.TTL`),
    /// in seconds from publish time; `0` is meaningful (deliver now or never).
    public var ttlSeconds: Int64?

    /// Creates options; every field defaults to "not given".
    public init(
        pushType: PushType? = nil, priority: Int? = nil, topic: String? = nil, collapseID: String? = nil,
        ttlSeconds: Int64? = nil
    ) {
        self.pushType = pushType
        self.priority = priority
        self.topic = topic
        self.collapseID = collapseID
        self.ttlSeconds = ttlSeconds
    }
}
