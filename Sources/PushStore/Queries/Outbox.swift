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

    /// A message's cancel for `webhooks`, with the recipients counted cancelled by it (rendered
    /// when sent, always the same).
    func appendCancelled(messageID: String, cancelled: Int64, webhooks: [String], now: Int64) throws(StoreError) {
        try insertRows(
            into: "webhook_outbox", columns: ["webhook", "event", "finished_message", "created_at"],
            webhooks.map {
                [.text($0), .text(Self.cancelledMarker + String(cancelled)), .text(messageID), .integer(now)]
            })
    }

    /// `event` of a cancel's row: the marker, then the count.
    static var cancelledMarker: String { "cancelled:" }

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
    /// one being sent (formed before, unanswered: the same rows, id and drops), or a new one of the
    /// oldest `limit` events not in a batch, reporting the drops since the last. nil: another
    /// owner's lease runs; an empty batch: nothing to send.
    ///
    /// The batch being sent is named in `webhook_senders`, not found from the outbox's oldest row:
    /// on PostgreSQL rows become visible in commit order, not `seq` order, and an older row showing
    /// up later must not re-form a batch already sent.
    func takeWebhookBatch(webhook: String, owner: String, limit: Int, leaseMillis: Int64, now: Int64)
        throws(StoreError) -> WebhookBatch?
    {
        try transaction { () throws(StoreError) -> WebhookBatch? in
            // Taken when free, expired or ours; the row lock makes two takers wait for each other.
            let sender = try row(
                """
                INSERT INTO webhook_senders (webhook, owner, lease_expires_at) VALUES (?, ?, ?)
                ON CONFLICT (webhook) DO UPDATE SET owner = excluded.owner, lease_expires_at = excluded.lease_expires_at
                WHERE webhook_senders.owner = excluded.owner OR webhook_senders.lease_expires_at <= ?
                RETURNING owner, batch, batch_at, batch_dropped, dropped
                """,
                [.text(webhook), .text(owner), .integer(now + leaseMillis), .integer(now)]
            ) {
                (owner: $0.text(0), batch: $0.text(1), at: $0.int64(2), batchDropped: $0.int64(3), dropped: $0.int64(4))
            }
            guard let sender, sender.owner == owner else { return nil }
            var batch = WebhookBatch(id: sender.batch, events: [], dropped: sender.batchDropped, formedAt: sender.at)
            if !batch.id.isEmpty, batch.dropped == 0,
                try row(
                    "SELECT 1 FROM webhook_outbox WHERE webhook = ? AND batch = ? LIMIT 1",
                    [.text(webhook), .text(batch.id)],
                    { _ in true }) == nil
            {
                // Nothing left of it to send (its rows gone): let it go rather than send it empty forever.
                batch.id = ""
            }
            if batch.id.isEmpty {
                let id = RandomID.make()
                // A drop report takes one of the batch's places.
                let rows = sender.dropped > 0 ? limit - 1 : limit
                let formed =
                    rows == 0
                    ? 0
                    : try run(
                        """
                        UPDATE webhook_outbox SET batch = ? WHERE batch = '' AND seq IN (
                            SELECT seq FROM webhook_outbox WHERE webhook = ? AND batch = '' ORDER BY seq LIMIT ?)
                        """,
                        [.text(id), .text(webhook), .int(rows)])
                guard formed > 0 || sender.dropped > 0 else { return WebhookBatch(id: "", events: []) }
                try run(
                    """
                    UPDATE webhook_senders SET batch = ?, batch_at = ?, batch_dropped = dropped, dropped = 0
                    WHERE webhook = ?
                    """,
                    [.text(id), .integer(now), .text(webhook)])
                batch = WebhookBatch(id: id, events: [], dropped: sender.dropped, formedAt: now)
            }
            let found = try rows(
                """
                SELECT event, finished_message, created_at FROM webhook_outbox
                WHERE webhook = ? AND batch = ? ORDER BY seq
                """,
                [.text(webhook), .text(batch.id)]
            ) { (event: $0.text(0), message: $0.text(1), createdAt: $0.int64(2)) }
            batch.events = found.map { row -> WebhookBatch.Event in
                if row.message.isEmpty { return .json(row.event) }
                guard row.event.hasPrefix(Self.cancelledMarker) else {
                    return .messageFinished(messageID: row.message, at: row.createdAt)
                }
                let count = Int64(row.event.dropFirst(Self.cancelledMarker.count)) ?? 0
                return .messageCancelled(messageID: row.message, cancelled: count, at: row.createdAt)
            }
            return batch
        }
    }

    /// Removes a batch that was answered (or refused for good); answers how many events it held.
    func completeWebhookBatch(webhook: String, batch: String) throws(StoreError) -> Int {
        try transaction { () throws(StoreError) -> Int in
            try run(
                "UPDATE webhook_senders SET batch = '', batch_at = 0, batch_dropped = 0 WHERE webhook = ? AND batch = ?",
                [.text(webhook), .text(batch)])
            return try run(
                "DELETE FROM webhook_outbox WHERE webhook = ? AND batch = ?", [.text(webhook), .text(batch)])
        }
    }

    /// Drops at most `limit` events not in a batch (the batch being sent is never cut): those
    /// written before `createdBefore`, then the oldest beyond `maxPending` (the batch being sent
    /// counts). Each pass reads at most `limit` rows besides the count, so a huge backlog is trimmed
    /// a bounded step at a time. What it drops is added to the count the next batch reports.
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
                    "DELETE FROM webhook_outbox WHERE webhook = ? AND batch = '' AND seq <= ? AND created_at < ?",
                    [.text(webhook), .integer(last.seq), .integer(createdBefore)])
            }
            let pending = try pendingOutbox(webhook: webhook)
            let room = limit - trim.expired
            if pending > maxPending && room > 0 {
                trim.overflow = try run(
                    """
                    DELETE FROM webhook_outbox WHERE batch = '' AND seq IN (
                        SELECT seq FROM webhook_outbox WHERE webhook = ? AND batch = '' ORDER BY seq LIMIT ?)
                    """,
                    [.text(webhook), .int(min(pending - maxPending, room))])
            }
            if trim.total > 0 {
                try run(
                    """
                    INSERT INTO webhook_senders (webhook, owner, lease_expires_at, dropped) VALUES (?, '', 0, ?)
                    ON CONFLICT (webhook) DO UPDATE SET dropped = webhook_senders.dropped + excluded.dropped
                    """,
                    [.text(webhook), .int(trim.total)])
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
