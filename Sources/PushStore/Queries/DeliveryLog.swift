/// The delivery log's queries; see `Store` for the semantics.
extension SQLDatabase {
    func appendDeliveryLog(_ records: [DeliveryLogRecord]) throws(StoreError) {
        try insertRows(
            into: "delivery_log",
            columns: [
                "message_id", "endpoint_id", "app", "token", "status", "reason", "http_status", "provider_id",
                "attempts", "time",
            ],
            records.map {
                [
                    .text($0.messageID), .text($0.endpointID), .text($0.app), .text($0.token),
                    .text($0.status.rawValue),
                    .text($0.reason), .int($0.httpStatus), .text($0.providerID), .int($0.attempts), .integer($0.time),
                ]
            })
    }

    /// Newest first, by message and/or endpoint and/or status; the cursor is the seq the next page
    /// starts below.
    func listDeliveries(
        messageID: String?, endpointID: String?, status: DeliveryLogRecord.Status?, cursor: String?, limit: Int
    ) throws(StoreError) -> Page<DeliveryLogRecord> {
        try PageCursor.check(limit: limit)
        let before = try PageCursor.decode(cursor, as: .deliveries)
        var filter = SQLConditions("seq < ?", .integer(before == 0 ? .max : before))
        filter.add("message_id = ?", ifGiven: messageID)
        filter.add("endpoint_id = ?", ifGiven: endpointID)
        filter.add("status = ?", ifGiven: status?.rawValue)
        let fetched = try rows(
            """
            SELECT seq, message_id, endpoint_id, app, token, status, reason, http_status, provider_id, attempts, time
            FROM delivery_log WHERE \(filter.sql) ORDER BY seq DESC LIMIT ?
            """,
            filter.values + [.int(limit + 1)]
        ) { (row: Row) throws(StoreError) -> (seq: Int64, record: DeliveryLogRecord) in
            guard let status = DeliveryLogRecord.Status(rawValue: row.text(5)) else {
                throw StoreError(.internal, message: "delivery log row \(row.int64(0)) has status \(row.text(5))")
            }
            return (
                row.int64(0),
                DeliveryLogRecord(
                    messageID: row.text(1), endpointID: row.text(2), app: row.text(3), token: row.text(4),
                    status: status, reason: row.text(6), httpStatus: Int(row.int64(7)), providerID: row.text(8),
                    attempts: Int(row.int64(9)), time: row.int64(10))
            )
        }
        let page = PageCursor.page(fetched, limit: limit, kind: .deliveries) { $0.seq }
        return Page(items: page.items.map(\.record), nextCursor: page.nextCursor)
    }

    /// Deletes up to `limit` rows older than `before` (the oldest first); answers how many.
    func purgeDeliveryLog(before: Int64, limit: Int) throws(StoreError) -> Int {
        try run(
            """
            DELETE FROM delivery_log WHERE seq IN (
                SELECT seq FROM delivery_log WHERE time < ? ORDER BY time LIMIT ?)
            """,
            [.integer(before), .int(limit)])
    }
}
