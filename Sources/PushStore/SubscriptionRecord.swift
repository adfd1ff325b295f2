/// An endpoint's subscription to a topic (SNS protocol `application`).
public struct SubscriptionRecord: Sendable, Equatable {
    /// 32 lowercase hex characters: the creation time, then 80 random bits (`RandomID`).
    public var id: String
    /// The topic's name.
    public var topic: String
    /// The subscribed endpoint's id.
    public var endpointID: String
    /// An SNS filter policy, stored verbatim; `""` matches every message.
    public var filterPolicyJSON: String
    /// What the policy applies to: `""` (message attributes, SNS's `MessageAttributes`, the
    /// default) or `MessageBody` (the message's JSON body).
    public var filterPolicyScope: String

    /// Makes a record.
    public init(
        id: String, topic: String, endpointID: String, filterPolicyJSON: String, filterPolicyScope: String = ""
    ) {
        self.id = id
        self.topic = topic
        self.endpointID = endpointID
        self.filterPolicyJSON = filterPolicyJSON
        self.filterPolicyScope = filterPolicyScope
    }
}
