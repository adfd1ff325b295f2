/// Topic queries; see `Store` for the semantics.
extension SQLDatabase {
    /// The topic's seq, or `nil` if there is no such topic.
    func topicSeq(name: String) throws(StoreError) -> Int64? {
        try row("SELECT seq FROM topics WHERE name = ?", [.text(name)]) { $0.int64(0) }
    }

    func createTopic(name: String) throws(StoreError) {
        try run("INSERT INTO topics (name) VALUES (?) ON CONFLICT (name) DO NOTHING", [.text(name)])
    }

    func deleteTopic(name: String) throws(StoreError) {
        // Subscriptions go by ON DELETE CASCADE.
        try run("DELETE FROM topics WHERE name = ?", [.text(name)])
    }

    func listTopics(cursor: String?, limit: Int, countingSubscribers: Bool) throws(StoreError) -> Page<TopicRecord> {
        try PageCursor.check(limit: limit)
        let after = try PageCursor.decode(cursor, as: .topics)
        // The count reads the topic's entries in the subscriptions_topic index, not the rows.
        let count = countingSubscribers ? "(SELECT count(*) FROM subscriptions s WHERE s.topic_seq = t.seq)" : "0"
        let fetched = try rows(
            "SELECT t.seq, t.name, \(count) FROM topics t WHERE t.seq > ? ORDER BY t.seq LIMIT ?",
            [.integer(after), .int(limit + 1)]
        ) { (seq: $0.int64(0), record: TopicRecord(name: $0.text(1), subscribers: $0.int64(2))) }
        let page = PageCursor.page(fetched, limit: limit, kind: .topics) { $0.seq }
        return Page(items: page.items.map(\.record), nextCursor: page.nextCursor)
    }
}
