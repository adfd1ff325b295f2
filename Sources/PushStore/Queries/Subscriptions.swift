/// Subscription queries; see `Store` for the semantics.
extension SQLDatabase {
    func subscription(id: String) throws(StoreError) -> SubscriptionRecord {
        let found = try row(
            "SELECT \(Columns.subscription) FROM \(Columns.subscriptionJoins) WHERE s.id = ?", [.text(id)]
        ) { Columns.subscription($0).record }
        guard let found else { throw StoreError(.notFound, message: "subscription \(id) does not exist") }
        return found
    }

    func subscribe(topic: String, endpointID: String, filterPolicyJSON: String, filterPolicyScope: String)
        throws(StoreError) -> (subscription: SubscriptionRecord, created: Bool)
    {
        try transaction { () throws(StoreError) -> (subscription: SubscriptionRecord, created: Bool) in
            guard let topicSeq = try topicSeq(name: topic) else {
                throw StoreError(.notFound, message: "topic \(topic) does not exist")
            }
            let endpointSeq = try endpoint(id: endpointID).seq
            let record = SubscriptionRecord(
                id: RandomID.make(), topic: topic, endpointID: endpointID, filterPolicyJSON: filterPolicyJSON,
                filterPolicyScope: filterPolicyScope)
            // ON CONFLICT: a concurrent Subscribe of the same pair (another instance) is not an error.
            let inserted = try insertSubscription(
                id: record.id, topicSeq: topicSeq, endpointSeq: endpointSeq, filterPolicyJSON: filterPolicyJSON,
                filterPolicyScope: filterPolicyScope, ifAbsent: true)
            if inserted == 1 { return (record, true) }
            let existing = try row(
                "SELECT seq, id, filter_policy_json, filter_policy_scope FROM subscriptions "
                    + "WHERE topic_seq = ? AND endpoint_seq = ?" + engine.forUpdate,
                [.integer(topicSeq), .integer(endpointSeq)]
            ) { (seq: $0.int64(0), id: $0.text(1), filterPolicyJSON: $0.text(2), filterPolicyScope: $0.text(3)) }
            guard let existing else {
                throw StoreError(
                    .conflict, message: "the subscription or its endpoint was removed concurrently; retry")
            }
            if existing.filterPolicyJSON != filterPolicyJSON || existing.filterPolicyScope != filterPolicyScope {
                try run(
                    "UPDATE subscriptions SET filter_policy_json = ?, filter_policy_scope = ? WHERE seq = ?",
                    [.text(filterPolicyJSON), .text(filterPolicyScope), .integer(existing.seq)])
            }
            return (
                SubscriptionRecord(
                    id: existing.id, topic: topic, endpointID: endpointID, filterPolicyJSON: filterPolicyJSON,
                    filterPolicyScope: filterPolicyScope), false
            )
        }
    }

    /// Inserts a subscription (on PostgreSQL with its endpoint's copies, `SubscriptionDeliverySchema`,
    /// read from the endpoint's row under a share lock); `ifAbsent` skips an existing (topic,
    /// endpoint) pair. Answers rows inserted.
    @discardableResult
    func insertSubscription(
        id: String, topicSeq: Int64, endpointSeq: Int64, filterPolicyJSON: String, filterPolicyScope: String = "",
        ifAbsent: Bool = false
    )
        throws(StoreError) -> Int
    {
        let onConflict = ifAbsent ? " ON CONFLICT (topic_seq, endpoint_seq) DO NOTHING" : ""
        let values: [SQLValue] = [
            .text(id), .integer(topicSeq), .text(filterPolicyJSON), .text(filterPolicyScope), .integer(endpointSeq),
        ]
        guard engine.subscriptionsCopyEndpoints else {
            return try run(
                """
                INSERT INTO subscriptions (id, topic_seq, filter_policy_json, filter_policy_scope, endpoint_seq) \
                VALUES (?, ?, ?, ?, ?)\(onConflict)
                """, values)
        }
        return try run(
            """
            INSERT INTO subscriptions (id, topic_seq, filter_policy_json, filter_policy_scope, endpoint_seq, \
            endpoint_id, endpoint_app, endpoint_token, endpoint_enabled) \
            SELECT ?, ?, ?, ?, e.seq, e.id, e.app, e.token, e.enabled FROM endpoints e WHERE e.seq = ? FOR SHARE\
            \(onConflict)
            """, values)
    }

    func updateSubscription(id: String, filterPolicyJSON: String?, filterPolicyScope: String?)
        throws(StoreError) -> SubscriptionRecord
    {
        try transaction { () throws(StoreError) -> SubscriptionRecord in
            if let filterPolicyJSON {
                _ = try run(
                    "UPDATE subscriptions SET filter_policy_json = ? WHERE id = ?",
                    [.text(filterPolicyJSON), .text(id)])
            }
            if let filterPolicyScope {
                _ = try run(
                    "UPDATE subscriptions SET filter_policy_scope = ? WHERE id = ?",
                    [.text(filterPolicyScope), .text(id)])
            }
            return try subscription(id: id)
        }
    }

    func unsubscribe(id: String) throws(StoreError) {
        try run("DELETE FROM subscriptions WHERE id = ?", [.text(id)])
    }

    func listSubscriptions(topic: String?, endpointID: String?, apps: [String]?, cursor: String?, limit: Int)
        throws(StoreError) -> Page<SubscriptionRecord>
    {
        try PageCursor.check(limit: limit)
        let after = try PageCursor.decode(cursor, as: .subscriptions)
        // One SQL text per combination of filters, so each is prepared once and cached.
        var filter = SQLConditions("s.seq > ?", .integer(after))
        filter.add("t.name = ?", ifGiven: topic)
        filter.add("e.id = ?", ifGiven: endpointID)
        filter.add("e.app", in: apps)
        let fetched = try rows(
            """
            SELECT \(Columns.subscription) FROM \(Columns.subscriptionJoins)
            WHERE \(filter.sql) ORDER BY s.seq LIMIT ?
            """, filter.values + [.int(limit + 1)]
        ) { Columns.subscription($0) }
        let page = PageCursor.page(fetched, limit: limit, kind: .subscriptions) { $0.seq }
        return Page(items: page.items.map(\.record), nextCursor: page.nextCursor)
    }
}
