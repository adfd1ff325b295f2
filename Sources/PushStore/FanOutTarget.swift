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
}
