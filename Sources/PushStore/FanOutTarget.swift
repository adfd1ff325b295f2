/// One recipient of a publish: an endpoint and, for a topic's, the subscription that brings the
/// message to it, read in one query.
///
/// Only what delivering needs is read: the endpoint's id, app, token and state, the subscription's
/// filter policy. The endpoint's custom data, creation time, disabled reason and user and the
/// subscription's id are left empty (a fan-out copies each target several times between the
/// page read and the commit; every string it holds is a reference count to change per copy).
public struct FanOutTarget: Sendable, Equatable {
    /// The subscription (its filter policy decides whether the message goes out); its `id` is empty.
    public var subscription: SubscriptionRecord
    /// The endpoint (`customUserData`, `createdAt`, `disabledReason`, `userID` empty); disabled ones are
    /// included so the fan-out can count them as skipped.
    public var endpoint: EndpointRecord
    /// The target's row in its fan-out order (0: none, for a held or a direct target).
    public var position: Int64

    /// The fan-out position just after this target (`""` for none). Storing it with
    /// `recordProgress` lets a restarted fan-out resume here, so a chunk can be checkpointed in the
    /// middle of a page. Made when asked: only a page's last target's is needed.
    public var cursor: String { position > 0 ? PageCursor.encode(.fanOut, after: position) : "" }

    /// Makes a target at `position`.
    public init(subscription: SubscriptionRecord, endpoint: EndpointRecord, position: Int64) {
        self.subscription = subscription
        self.endpoint = endpoint
        self.position = position
    }

    /// An endpoint sent to by itself (a user's, a direct publish's, a held one): no subscription, so
    /// no filter policy.
    public init(endpoint: EndpointRecord, position: Int64 = 0) {
        self.init(
            subscription: SubscriptionRecord(id: "", topic: "", endpointID: endpoint.id, filterPolicyJSON: ""),
            endpoint: endpoint, position: position)
    }
}
