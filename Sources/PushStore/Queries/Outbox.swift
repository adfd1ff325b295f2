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
    /// one already formed (sent before, unanswered), or a new one of the oldest `limit` events.
    /// nil: another owner's lease runs; an empty batch: nothing pending.
    func takeWebhookBatch(webhook: String, owner: String, limit: Int, leaseMillis: Int64, now: Int64)
        throws(StoreError) -> WebhookBatch?
    {
        try transaction { () throws(StoreError) -> WebhookBatch? in
            let holder = try row(
                "SELECT owner, lease_expires_at FROM webhook_senders WHERE webhook = ?" + engine.forUpdate,
                [.text(webhook)]
            ) { (owner: $0.text(0), expiresAt: $0.int64(1)) }
            if let holder, holder.owner != owner, holder.expiresAt > now { return nil }
            try run(
                """
                INSERT INTO webhook_senders (webhook, owner, lease_expires_at) VALUES (?, ?, ?)
                ON CONFLICT (webhook) DO UPDATE SET owner = excluded.owner, lease_expires_at = excluded.lease_expires_at
                """,
                [.text(webhook), .text(owner), .integer(now + leaseMillis)])
            typealias Found = (seq: Int64, event: String, finished: String, createdAt: Int64, batch: String)
            let read = { (row: Row) -> Found in
                (row.int64(0), row.text(1), row.text(2), row.int64(3), row.text(4))
            }
            // The oldest row tells whether a batch is formed already (batches are formed oldest first,
            // so an unfinished one holds the oldest rows).
            guard
                let first = try row(
                    """
                    SELECT seq, event, finished_message, created_at, batch FROM webhook_outbox
                    WHERE webhook = ? ORDER BY seq LIMIT 1
                    """,
                    [.text(webhook)], read)
            else { return WebhookBatch(id: "", events: []) }
            var id = first.batch
            if id.isEmpty {
                id = RandomID.make()
                try run(
                    """
                    UPDATE webhook_outbox SET batch = ? WHERE seq IN (
                        SELECT seq FROM webhook_outbox WHERE webhook = ? ORDER BY seq LIMIT ?)
                    """,
                    [.text(id), .text(webhook), .int(limit)])
            }
            let found = try rows(
                """
                SELECT seq, event, finished_message, created_at, batch FROM webhook_outbox
                WHERE webhook = ? AND batch = ? ORDER BY seq
                """,
                [.text(webhook), .text(id)], read)
            return WebhookBatch(
                id: id,
                events: found.map {
                    $0.finished.isEmpty ? .json($0.event) : .messageFinished(messageID: $0.finished, at: $0.createdAt)
                })
        }
    }

    /// Removes a batch that was answered (or refused for good); answers how many events it held.
    func completeWebhookBatch(webhook: String, batch: String) throws(StoreError) -> Int {
        try run("DELETE FROM webhook_outbox WHERE webhook = ? AND batch = ?", [.text(webhook), .text(batch)])
    }

    /// Drops events older than `createdBefore`, then the oldest beyond `maxPending`.
    func trimOutbox(webhook: String, maxPending: Int, createdBefore: Int64) throws(StoreError) -> OutboxTrim {
        try transaction { () throws(StoreError) -> OutboxTrim in
            var trim = OutboxTrim()
            trim.expired = try run(
                """
                DELETE FROM webhook_outbox WHERE seq IN (
                    SELECT seq FROM webhook_outbox WHERE webhook = ? AND created_at < ?)
                """,
                [.text(webhook), .integer(createdBefore)])
            let pending = try pendingOutbox(webhook: webhook)
            if pending > maxPending {
                trim.overflow = try run(
                    """
                    DELETE FROM webhook_outbox WHERE seq IN (
                        SELECT seq FROM webhook_outbox WHERE webhook = ? ORDER BY seq LIMIT ?)
                    """,
                    [.text(webhook), .int(pending - maxPending)])
            }
            return trim
        }
    }

    func pendingOutbox(webhook: String) throws(StoreError) -> Int {
        Int(try row("SELECT count(*) FROM webhook_outbox WHERE webhook = ?", [.text(webhook)]) { $0.int64(0) } ?? 0)
    }

    /// Ends `owner`'s webhook leases (a graceful stop).
    func releaseWebhookLeases(owner: String) throws(StoreError) {
        try run("UPDATE webhook_senders SET lease_expires_at = 0 WHERE owner = ?", [.text(owner)])
    }
}
