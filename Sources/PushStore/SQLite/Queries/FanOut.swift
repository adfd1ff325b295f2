/// The fan-out read and the bulk loader that feeds it. They run on the store's queue.
extension Database {
    /// One indexed range scan of `subscriptions_topic` (topic_seq, seq) joined to endpoints by
    /// primary key: the cost of a page is its size, however large the topic.
    static let fanOutSQL = """
        SELECT s.seq, s.id, s.filter_policy_json, \(Columns.endpoint)
        FROM subscriptions s JOIN endpoints e ON e.seq = s.endpoint_seq
        WHERE s.topic_seq = (SELECT seq FROM topics WHERE name = ?) AND s.seq > ?
        ORDER BY s.seq LIMIT ?
        """

    func fanOutPage(topic: String, after cursor: String?, limit: Int) throws(StoreError) -> Page<FanOutTarget> {
        try PageCursor.check(limit: limit)
        let after = try PageCursor.decode(cursor, as: .fanOut)
        let fetched = try rows(Self.fanOutSQL, [.text(topic), .integer(after), .int(limit + 1)]) { row in
            let seq = row.int64(0)
            let endpoint = Columns.endpoint(row, from: 3).record
            let subscription = SubscriptionRecord(
                id: row.text(1), topic: topic, endpointID: endpoint.id, filterPolicyJSON: row.text(2))
            return (
                seq: seq,
                target: FanOutTarget(
                    subscription: subscription, endpoint: endpoint, cursor: PageCursor.encode(.fanOut, after: seq))
            )
        }
        let page = PageCursor.page(fetched, limit: limit, kind: .fanOut) { $0.seq }
        return Page(items: page.items.map(\.target), nextCursor: page.nextCursor)
    }

    func bulkCreateSubscribed(topic: String, app: String, tokens: [String], now: Int64) throws(StoreError) -> Int {
        try transaction { () throws(StoreError) -> Int in
            try createTopic(name: topic)
            guard let topicSeq = try topicSeq(name: topic) else {
                throw StoreError(.internal, message: "topic \(topic) vanished while bulk loading")
            }
            var created = 0
            for token in tokens {
                let record = EndpointRecord(
                    id: RandomID.make(), app: app, token: token, enabled: true, customUserData: "", createdAt: now,
                    disabledReason: "")
                try insertEndpoint(record, ifAbsent: true)
                guard let endpointSeq = try endpoint(app: app, token: token)?.seq else {
                    throw StoreError(.internal, message: "endpoint for token \(token) vanished while bulk loading")
                }
                created += try insertSubscription(
                    id: RandomID.make(), topicSeq: topicSeq, endpointSeq: endpointSeq, filterPolicyJSON: "",
                    ifAbsent: true)
            }
            return created
        }
    }
}
