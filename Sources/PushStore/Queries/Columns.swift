/// Column lists and row readers shared by the queries, so each record is read one way everywhere.
/// Every list starts with the row's `seq`, which page cursors are made of.
enum Columns {
    /// `seq` then the record's fields, for table alias `e`.
    static let endpoint =
        "e.seq, e.id, e.app, e.token, e.enabled, e.custom_user_data, e.created_at, e.disabled_reason, e.user_id"

    /// Reads `Columns.endpoint` starting at column `first`.
    static func endpoint(_ row: some SQLRow, from first: Int32 = 0) -> (seq: Int64, record: EndpointRecord) {
        let record = EndpointRecord(
            id: row.text(first + 1), app: row.text(first + 2), token: row.text(first + 3),
            enabled: row.bool(first + 4), customUserData: row.text(first + 5), createdAt: row.int64(first + 6),
            disabledReason: row.text(first + 7), userID: row.text(first + 8))
        return (row.int64(first), record)
    }

    /// `seq` then the subscription's fields; joins topics `t` and endpoints `e` for the names.
    static let subscription = "s.seq, s.id, t.name, e.id, s.filter_policy_json, s.filter_policy_scope"
    /// The joins `subscription` needs, from `subscriptions s`.
    static let subscriptionJoins =
        "subscriptions s JOIN topics t ON t.seq = s.topic_seq JOIN endpoints e ON e.seq = s.endpoint_seq"

    /// Reads `Columns.subscription`.
    static func subscription(_ row: some SQLRow) -> (seq: Int64, record: SubscriptionRecord) {
        let record = SubscriptionRecord(
            id: row.text(1), topic: row.text(2), endpointID: row.text(3), filterPolicyJSON: row.text(4),
            filterPolicyScope: row.text(5))
        return (row.int64(0), record)
    }

    /// `seq` then the message's own fields (attributes live in `message_attributes`; the counts are
    /// the row's own — non-zero only for messages fanned out before chunks — plus its chunks').
    static let message = """
        seq, id, topic, endpoint_id, message, message_structure, published_at, state,
        total, delivered, rejected, failed, skipped, user_id, apps, deliver_at, max_per_second, cancelled, notify
        """

    /// Reads `Columns.message`; the caller adds the chunks' counts and fills in the attributes.
    static func message(_ row: some SQLRow) throws(StoreError) -> (seq: Int64, record: MessageRecord) {
        let stateText = row.text(7)
        guard let state = MessageState(rawValue: stateText) else {
            throw StoreError(.internal, message: "message \(row.text(1)) has an unknown state \"\(stateText)\"")
        }
        var record = MessageRecord(
            id: row.text(1), topic: row.optionalText(2), endpointID: row.optionalText(3),
            userID: row.optionalText(13), apps: appsColumn(row.text(14)), message: row.text(4),
            messageStructure: row.text(5), attributes: [:], publishedAt: row.int64(6), deliverAt: row.int64(15),
            maxPerSecond: Int32(clamping: row.int64(16)), state: state, total: row.int64(8),
            delivered: row.int64(9), rejected: row.int64(10), failed: row.int64(11), skipped: row.int64(12))
        record.cancelled = row.int64(17)
        record.notify = appsColumn(row.text(18))
        return (row.int64(0), record)
    }

    /// A user publish's apps (and a message's webhooks) as stored: names joined by newlines (app and
    /// webhook names hold no control characters), `""` for every app (no webhook).
    static func appsColumn(_ apps: [String]) -> String { apps.joined(separator: "\n") }

    static func appsColumn(_ text: String) -> [String] {
        text.isEmpty ? [] : text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}
