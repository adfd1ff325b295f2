/// The webhooks' outbox queries; see `Store` for the semantics.
extension SQLDatabase {
    /// Inserts rows of `columns` from `values` (one array per row), up to 16 rows per statement: a
    /// commit's few rows in one or two round trips, from at most 16 cached statements.
    func insertRows(into table: String, columns: [String], _ rows: [[SQLValue]]) throws(StoreError) {
        let group = 16
        var start = 0
        let tuple = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        while start < rows.count {
            let slice = rows[start..<min(start + group, rows.count)]
            try run(
                "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
                    + Array(repeating: tuple, count: slice.count).joined(separator: ", "),
                slice.flatMap { $0 })
            start += group
        }
    }

    func appendOutbox(_ events: [OutboxEvent]) throws(StoreError) {
        try insertRows(
            into: "webhook_outbox", columns: ["webhook", "event", "finished_message", "created_at"],
            events.map { [.text($0.webhook), .text($0.json), .text(""), .integer($0.createdAt)] })
    }

    /// A message's cancel for `webhooks`, rendered when sent.
    func appendCancelled(messageID: String, webhooks: [String], now: Int64) throws(StoreError) {
        try insertRows(
            into: "webhook_outbox", columns: ["webhook", "event", "finished_message", "created_at"],
            webhooks.map { [.text($0), .text("cancelled"), .text(messageID), .integer(now)] })
    }

    /// `message_finished` rows for the webhooks the message names (`notify`).
    func appendFinished(messageSeq: Int64, now: Int64) throws(StoreError) {
        guard
            let (id, notify) = try row(
                "SELECT id, notify FROM messages WHERE seq = ?", [.integer(messageSeq)], { ($0.text(0), $0.text(1)) }),
            !notify.isEmpty
        else { return }
        try insertRows(
            into: "webhook_outbox", columns: ["webhook", "event", "finished_message", "created_at"],
            Columns.appsColumn(notify).map { [.text($0), .text(""), .text(id), .integer(now)] })
    }

    /// Takes or renews `owner`'s lease on the webhook's sending, then answers the oldest batch: the
    /// one already formed (sent before, unanswered), or a new one of the oldest `limit` events not in
    /// a batch. nil: another owner's lease runs; an empty batch: nothing pending.
    ///
    /// On PostgreSQL rows become visible in commit order, not `seq` order: a formed batch is found
    /// by its own rows (never re-formed because an older row appeared since), so it stays the same
    /// rows under the same id until completed.
    func takeWebhookBatch(webhook: String, owner: String, limit: Int, leaseMillis: Int64, now: Int64)
        throws(StoreError) -> WebhookBatch?
    {
        try transaction { () throws(StoreError) -> WebhookBatch? in
            // Taken when free, expired or ours; the row lock makes two takers wait for each other.
            let taken = try row(
                """
                INSERT INTO webhook_senders (webhook, owner, lease_expires_at) VALUES (?, ?, ?)
                ON CONFLICT (webhook) DO UPDATE SET owner = excluded.owner, lease_expires_at = excluded.lease_expires_at
                WHERE webhook_senders.owner = excluded.owner OR webhook_senders.lease_expires_at <= ?
                RETURNING owner
                """,
                [.text(webhook), .text(owner), .integer(now + leaseMillis), .integer(now)]
            ) { $0.text(0) }
            guard taken == owner else { return nil }
            var id =
                try row(
                    "SELECT batch FROM webhook_outbox WHERE webhook = ? AND batch <> '' ORDER BY seq LIMIT 1",
                    [.text(webhook)]
                ) { $0.text(0) } ?? ""
            if id.isEmpty {
                id = RandomID.make()
                let formed = try run(
                    """
                    UPDATE webhook_outbox SET batch = ? WHERE seq IN (
                        SELECT seq FROM webhook_outbox WHERE webhook = ? AND batch = '' ORDER BY seq LIMIT ?)
                    """,
                    [.text(id), .text(webhook), .int(limit)])
                guard formed > 0 else { return WebhookBatch(id: "", events: []) }
            }
            let found = try rows(
                """
                SELECT event, finished_message, created_at FROM webhook_outbox
                WHERE webhook = ? AND batch = ? ORDER BY seq
                """,
                [.text(webhook), .text(id)]
            ) { (event: $0.text(0), message: $0.text(1), createdAt: $0.int64(2)) }
            return WebhookBatch(
                id: id,
                events: found.map { row -> WebhookBatch.Event in
                    if row.message.isEmpty { return .json(row.event) }
                    return row.event == "cancelled"
                        ? .messageCancelled(messageID: row.message, at: row.createdAt)
                        : .messageFinished(messageID: row.message, at: row.createdAt)
                })
        }
    }

    /// Removes a batch that was answered (or refused for good); answers how many events it held.
    func completeWebhookBatch(webhook: String, batch: String) throws(StoreError) -> Int {
        try run("DELETE FROM webhook_outbox WHERE webhook = ? AND batch = ?", [.text(webhook), .text(batch)])
    }

    /// Drops at most `limit` events not in a batch (a batch being sent is never cut): those written
    /// before `createdBefore`, then the oldest beyond `maxPending`. Each pass reads at most `limit`
    /// rows besides the count, so a huge backlog is trimmed a bounded step at a time.
    func trimOutbox(webhook: String, maxPending: Int, createdBefore: Int64, limit: Int) throws(StoreError)
        -> OutboxTrim
    {
        try transaction { () throws(StoreError) -> OutboxTrim in
            var trim = OutboxTrim()
            // Rows are written in time order (near enough), so the expired ones are the oldest.
            let oldest = try rows(
                "SELECT seq, created_at FROM webhook_outbox WHERE webhook = ? AND batch = '' ORDER BY seq LIMIT ?",
                [.text(webhook), .int(limit)]
            ) { (seq: $0.int64(0), createdAt: $0.int64(1)) }
            if let last = oldest.prefix(while: { $0.createdAt < createdBefore }).last {
                trim.expired = try run(
                    "DELETE FROM webhook_outbox WHERE webhook = ? AND batch = '' AND seq <= ?",
                    [.text(webhook), .integer(last.seq)])
            }
            let pending = try pendingOutbox(webhook: webhook)
            let room = limit - trim.expired
            if pending > maxPending && room > 0 {
                trim.overflow = try run(
                    """
                    DELETE FROM webhook_outbox WHERE seq IN (
                        SELECT seq FROM webhook_outbox WHERE webhook = ? AND batch = '' ORDER BY seq LIMIT ?)
                    """,
                    [.text(webhook), .int(min(pending - maxPending, room))])
            }
            return trim
        }
    }

    func pendingOutbox(webhook: String) throws(StoreError) -> Int {
        Int(try row("SELECT count(*) FROM webhook_outbox WHERE webhook = ?", [.text(webhook)]) { $0.int64(0) } ?? 0)
    }

    /// Ends every webhook lease (SQLite at open: one process owns the file).
    func releaseAllWebhookLeases() throws(StoreError) {
        try run("UPDATE webhook_senders SET lease_expires_at = 0", [])
    }

    /// Ends `owner`'s webhook leases (a graceful stop).
    func releaseWebhookLeases(owner: String) throws(StoreError) {
        try run("UPDATE webhook_senders SET lease_expires_at = 0 WHERE owner = ?", [.text(owner)])
    }
}
