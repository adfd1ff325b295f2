/// A message's recipients as rows of one table, `r`, in `r.seq` order: a topic's subscriptions or a
/// user's endpoints (in the publisher's apps). Chunk planning, pages and the count of what a
/// cancel leaves unsent all read the same rows. A direct publish has none (its one endpoint).
struct RecipientRows {
    /// `table r`.
    let from: String
    /// The condition on `r`, with `values` for its parameters.
    let condition: String
    let values: [SQLValue]

    init(_ target: MessageTarget) {
        switch target {
        case .topic(let name):
            from = "subscriptions r"
            condition = "r.topic_seq = (SELECT seq FROM topics WHERE name = ?)"
            values = [.text(name)]
        case .user(let userID, let apps):
            // Through endpoints_user (user_id, seq), whose predicate (user_id <> '') is repeated so
            // SQLite (and a generic PostgreSQL plan) may use the partial index; a grant's few apps
            // filter what it finds.
            from = "endpoints r"
            let inApps =
                apps.isEmpty
                ? "" : " AND r.app IN (" + Array(repeating: "?", count: apps.count).joined(separator: ", ") + ")"
            condition = "r.user_id = ? AND r.user_id <> ''" + inApps
            values = [.text(userID)] + apps.map(SQLValue.text)
        case .endpoint(let id):
            from = "endpoints r"
            condition = "r.id = ?"
            values = [.text(id)]
        }
    }
}

/// The fan-out read and the bench loaders' import; see `Store` for the semantics.
extension SQLDatabase {
    /// One indexed range scan of `subscriptions_topic` (topic_seq, seq): the cost of a page is its
    /// size, however large the topic. Only the columns a delivery needs (see `FanOutTarget`): the
    /// endpoint's from the subscription's copies where it has them (`SubscriptionDeliverySchema`),
    /// else joined by primary key.
    static func fanOutSQL(_ engine: SQLEngine) -> String {
        engine.subscriptionsCopyEndpoints ? FanOutSQL.fromCopies : FanOutSQL.joined
    }

    func fanOutPage(_ target: MessageTarget, after cursor: String?, through end: String?, limit: Int)
        throws(StoreError) -> Page<FanOutTarget>
    {
        try PageCursor.check(limit: limit)
        let after = try PageCursor.decode(cursor, as: .fanOut)
        let last: Int64 = if let end { try PageCursor.decode(end, as: .fanOut) } else { .max }
        var fetched: [FanOutTarget]
        switch target {
        case .topic(let topic):
            fetched = try rows(
                Self.fanOutSQL(engine), [.text(topic), .integer(after), .integer(last), .int(limit + 1)],
                capacity: limit + 1
            ) { row in
                let endpoint = EndpointRecord(
                    id: row.text(3), app: row.text(4), token: row.text(5), enabled: row.bool(6), customUserData: "",
                    createdAt: 0, disabledReason: "", userID: "")
                let subscription = SubscriptionRecord(
                    id: "", topic: topic, endpointID: endpoint.id, filterPolicyJSON: row.text(1),
                    filterPolicyScope: row.text(2))
                return FanOutTarget(subscription: subscription, endpoint: endpoint, position: row.int64(0))
            }
        case .user, .endpoint:
            // The endpoints themselves: no subscription, so no filter policy.
            let rows = RecipientRows(target)
            fetched = try self.rows(
                """
                SELECT e.seq, e.id, e.app, e.token, e.enabled FROM endpoints e WHERE e.seq IN (
                    SELECT r.seq FROM \(rows.from) WHERE \(rows.condition) AND r.seq > ? AND r.seq <= ?
                    ORDER BY r.seq LIMIT ?)
                ORDER BY e.seq
                """,
                rows.values + [.integer(after), .integer(last), .int(limit + 1)], capacity: limit + 1
            ) { row in
                let endpoint = EndpointRecord(
                    id: row.text(1), app: row.text(2), token: row.text(3), enabled: row.bool(4), customUserData: "",
                    createdAt: 0, disabledReason: "", userID: "")
                return FanOutTarget(endpoint: endpoint, position: row.int64(0))
            }
        }
        // One more than asked was read: whether there is a next page.
        guard fetched.count > limit else { return Page(items: fetched, nextCursor: nil) }
        fetched.removeLast(fetched.count - limit)
        return Page(items: fetched, nextCursor: fetched.last?.cursor)
    }
}

/// The page query's two texts, made once: a page asks for one, and the statement cache finds it by
/// its text.
private enum FanOutSQL {
    static let fromCopies = page(
        endpoint: "s.endpoint_id, s.endpoint_app, s.endpoint_token, s.endpoint_enabled", from: "subscriptions s")
    static let joined = page(
        endpoint: "e.id, e.app, e.token, e.enabled", from: "subscriptions s JOIN endpoints e ON e.seq = s.endpoint_seq")

    private static func page(endpoint: String, from: String) -> String {
        """
        SELECT s.seq, s.filter_policy_json, s.filter_policy_scope, \(endpoint)
        FROM \(from)
        WHERE s.topic_seq = (SELECT seq FROM topics WHERE name = ?) AND s.seq > ? AND s.seq <= ?
        ORDER BY s.seq LIMIT ?
        """
    }
}
