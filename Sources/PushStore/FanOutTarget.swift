/// One recipient of a topic publish: a subscription with its endpoint, read in one query.
public struct FanOutTarget: Sendable, Equatable {
    /// The subscription (its filter policy decides whether the message goes out).
    public var subscription: SubscriptionRecord
    /// The endpoint; disabled ones are included so the fan-out can count them as skipped.
    public var endpoint: EndpointRecord
    /// The fan-out position just after this target. Storing it with `recordProgress` lets a
    /// restarted fan-out resume here, so a chunk can be checkpointed in the middle of a page.
    public var cursor: String

    /// Makes a target.
    public init(subscription: SubscriptionRecord, endpoint: EndpointRecord, cursor: String) {
        self.subscription = subscription
        self.endpoint = endpoint
        self.cursor = cursor
    }

    /// An endpoint sent to by itself (a user's, a direct publish's, a held one): no subscription, so
    /// no filter policy.
    public init(endpoint: EndpointRecord, cursor: String) {
        self.init(
            subscription: SubscriptionRecord(id: "", topic: "", endpointID: endpoint.id, filterPolicyJSON: ""),
            endpoint: endpoint, cursor: cursor)
    }
}
