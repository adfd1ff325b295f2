/// Schema step 5, the same on both engines: a subscription's filter policy scope (`''`: message
/// attributes, what every earlier subscription's policy applies to; `MessageBody`).
enum SubscriptionScopeSchema {
    static let sql = "ALTER TABLE subscriptions ADD COLUMN filter_policy_scope TEXT NOT NULL DEFAULT ''"
}
