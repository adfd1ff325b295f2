/// Fan-out chunks and their leases; see `Store` for the semantics.
///
/// A message's chunks are planned one at a time by whoever claims work: the claimer locks the
/// message row, finds the subscription `chunkSize` places after the message's planning position
/// (an index-only range of the topic), and inserts the chunk already leased to itself. So a huge
/// topic is never split up front, and a publish costs nothing extra.
extension SQLDatabase {
    /// Claims work for `policy.owner`: a chunk whose lease ran out (oldest message first), else a new
    /// chunk of the unfinished message that has the fewest chunks so far (so a small publish is not
    /// queued behind a huge one). `nil` when there is nothing to do.
    func claimFanOutChunk(_ policy: FanOutLeasePolicy, now: Int64) throws(StoreError) -> FanOutChunk? {
        guard policy.chunkSize >= 1, policy.leaseMillis >= 1 else {
            throw StoreError(.invalidArgument, message: "chunk size and lease must be positive")
        }
        return try transaction { () throws(StoreError) -> FanOutChunk? in
            if let chunk = try takeOverExpired(policy, now: now) { return chunk }
            return try planNext(policy, now: now)
        }
    }

    private func takeOverExpired(_ policy: FanOutLeasePolicy, now: Int64) throws(StoreError) -> FanOutChunk? {
        let expired = try row(
            """
            SELECT message_seq, number, cursor, range_last, holds, parkings FROM fanout_chunks
            WHERE state = 'working' AND lease_expires_at <= ? ORDER BY message_seq, number LIMIT 1
            """ + engine.forUpdateSkipLocked,
            [.integer(now)]
        ) {
            (
                messageSeq: $0.int64(0), number: $0.int64(1), cursor: $0.int64(2),
                last: $0.isNull(3) ? nil : $0.int64(3),
                holds: $0.int64(4), parkings: $0.int64(5)
            )
        }
        guard let expired else { return nil }
        let expiresAt = now + policy.leaseMillis
        let claim = Self.newClaim(policy)
        try run(
            "UPDATE fanout_chunks SET lease_owner = ?, lease_expires_at = ? WHERE message_seq = ? AND number = ?",
            [.text(claim), .integer(expiresAt), .integer(expired.messageSeq), .integer(expired.number)])
        return FanOutChunk(
            message: try message(seq: expired.messageSeq), number: Int(expired.number),
            cursor: Self.position(expired.cursor), end: expired.last.map { PageCursor.encode(.fanOut, after: $0) },
            leaseExpiresAt: expiresAt, claim: claim, holds: Int(expired.holds), parkings: Int(expired.parkings))
    }

    private func planNext(_ policy: FanOutLeasePolicy, now: Int64) throws(StoreError) -> FanOutChunk? {
        let candidate = try row(
            """
            SELECT seq, topic, planned_after, chunks FROM messages
            WHERE state IN ('accepted', 'fanningOut') AND planned = 0 ORDER BY chunks, seq LIMIT 1
            """ + engine.forUpdateSkipLocked,
            []
        ) { (seq: $0.int64(0), topic: $0.optionalText(1), after: $0.int64(2), chunks: $0.int64(3)) }
        guard let candidate else { return nil }
        // A direct publish is one chunk; a topic's chunk ends `chunkSize` subscriptions on, or runs to
        // the end when fewer are left (the message's last chunk).
        var last: Int64? = nil
        if let topic = candidate.topic {
            // The chunkSize-th subscription after the planning position and the one after it: if both
            // exist the chunk ends at the first; otherwise the rest of the topic is the last chunk.
            let bounds = try rows(
                """
                SELECT s.seq FROM subscriptions s
                WHERE s.topic_seq = (SELECT seq FROM topics WHERE name = ?) AND s.seq > ?
                ORDER BY s.seq LIMIT 2 OFFSET ?
                """,
                [.text(topic), .integer(candidate.after), .int(policy.chunkSize - 1)]
            ) { $0.int64(0) }
            if bounds.count == 2 { last = bounds[0] }
        }
        let expiresAt = now + policy.leaseMillis
        let claim = Self.newClaim(policy)
        try run(
            """
            INSERT INTO fanout_chunks (message_seq, number, range_after, range_last, cursor, state, lease_owner,
                                       lease_expires_at, total, delivered, rejected, failed, skipped)
            VALUES (?, ?, ?, ?, ?, 'working', ?, ?, 0, 0, 0, 0, 0)
            """,
            [
                .integer(candidate.seq), .integer(candidate.chunks), .integer(candidate.after),
                last.map(SQLValue.integer) ?? .null, .integer(candidate.after), .text(claim),
                .integer(expiresAt),
            ])
        try run(
            """
            UPDATE messages SET state = 'fanningOut', chunks = chunks + 1, planned_after = ?, planned = ?
            WHERE seq = ?
            """,
            [.integer(last ?? candidate.after), .bool(last == nil), .integer(candidate.seq)])
        return FanOutChunk(
            message: try message(seq: candidate.seq), number: Int(candidate.chunks),
            cursor: Self.position(candidate.after), end: last.map { PageCursor.encode(.fanOut, after: $0) },
            leaseExpiresAt: expiresAt, claim: claim)
    }

    /// A lease holder for one claim: `owner/random`, so `releaseFanOutLeases(owner:)` finds the
    /// owner's claims by prefix.
    private static func newClaim(_ policy: FanOutLeasePolicy) -> String { policy.owner + "/" + RandomID.make() }

    /// A stored position as a cursor (`""` for the beginning).
    private static func position(_ seq: Int64) -> String { seq == 0 ? "" : PageCursor.encode(.fanOut, after: seq) }

    /// The chunk's message seq, checking that `claim` still holds it; `conflict` otherwise.
    private func heldChunk(messageID: String, number: Int, claim owner: String, lockMessage: Bool)
        throws(StoreError) -> Int64
    {
        let messageSeq = try row(
            "SELECT seq FROM messages WHERE id = ?" + (lockMessage ? engine.forUpdate : ""), [.text(messageID)]
        ) { $0.int64(0) }
        guard let messageSeq else { throw StoreError(.notFound, message: "message \(messageID) does not exist") }
        let holder = try row(
            "SELECT lease_owner, state FROM fanout_chunks WHERE message_seq = ? AND number = ?" + engine.forUpdate,
            [.integer(messageSeq), .int(number)]
        ) { (owner: $0.text(0), state: $0.text(1)) }
        guard let holder else {
            throw StoreError(.notFound, message: "message \(messageID) has no chunk \(number)")
        }
        guard holder.owner == owner, holder.state == "working" else {
            throw StoreError(
                .conflict,
                message: "chunk \(number) of message \(messageID) is no longer leased to \(owner) "
                    + "(held by \(holder.owner), \(holder.state))")
        }
        return messageSeq
    }

    func renewFanOutLease(_ chunk: FanOutChunk, policy: FanOutLeasePolicy, now: Int64) throws(StoreError) -> Int64 {
        let number = chunk.number
        return try transaction { () throws(StoreError) -> Int64 in
            let messageSeq = try heldChunk(
                messageID: chunk.message.id, number: number, claim: chunk.claim, lockMessage: false)
            let expiresAt = now + policy.leaseMillis
            try run(
                "UPDATE fanout_chunks SET lease_expires_at = ? WHERE message_seq = ? AND number = ?",
                [.integer(expiresAt), .integer(messageSeq), .int(number)])
            return expiresAt
        }
    }

    func recordChunkProgress(
        _ chunk: FanOutChunk, policy: FanOutLeasePolicy, cursor: String, counts: ProgressCounts, state: MessageState,
        holds changes: FanOutHoldChanges, now: Int64
    ) throws(StoreError) -> Int64 {
        let number = chunk.number
        guard counts.isValid else {
            throw StoreError(.invalidArgument, message: "progress counts must not be negative")
        }
        guard state != .accepted else {
            throw StoreError(.invalidArgument, message: "a chunk is fanningOut, completed or expired")
        }
        let position = try PageCursor.decode(cursor, as: .fanOut)
        let finishing = state.isFinished
        if changes.parkUntil != nil && finishing {
            throw StoreError(.invalidArgument, message: "a chunk that parks does not finish")
        }
        return try transaction { () throws(StoreError) -> Int64 in
            // Finishing locks the message first, so the last two chunks finishing at once on two
            // instances see each other and exactly one of them completes the message.
            let messageSeq = try heldChunk(
                messageID: chunk.message.id, number: number, claim: chunk.claim, lockMessage: finishing)
            try changeHolds(messageSeq: messageSeq, number: number, changes)
            let held =
                try row(
                    "SELECT count(*) FROM fanout_holds WHERE message_seq = ? AND number = ?",
                    [.integer(messageSeq), .int(number)]
                ) { $0.int64(0) } ?? 0
            if finishing && held > 0 {
                throw StoreError(
                    .invalidArgument,
                    message: "chunk \(number) of message \(chunk.message.id) still holds \(held) recipients; park it")
            }
            // A parked chunk has no holder: the claim that parked it can record nothing more, and it
            // is claimable once its "lease" (the park) runs out.
            let parked = changes.parkUntil != nil
            try run(
                """
                UPDATE fanout_chunks SET cursor = ?, state = ?, lease_expires_at = ?, total = total + ?,
                    delivered = delivered + ?, rejected = rejected + ?, failed = failed + ?, skipped = skipped + ?,
                    holds = ?, parkings = parkings + ?, lease_owner = CASE WHEN ? = 1 THEN '' ELSE lease_owner END
                WHERE message_seq = ? AND number = ?
                """,
                [
                    .integer(position), .text(finishing ? state.rawValue : "working"),
                    .integer(changes.parkUntil ?? (now + policy.leaseMillis)), .integer(counts.total),
                    .integer(counts.delivered), .integer(counts.rejected), .integer(counts.failed),
                    .integer(counts.skipped), .integer(held), .int(parked ? 1 : 0), .int(parked ? 1 : 0),
                    .integer(messageSeq), .int(number),
                ])
            if finishing { try finishIfDone(messageSeq: messageSeq) }
            return held
        }
    }

    /// Applies `changes` to a chunk's holds: releases first, then holds (a recipient both released
    /// and held again keeps its hold).
    private func changeHolds(messageSeq: Int64, number: Int, _ changes: FanOutHoldChanges) throws(StoreError) {
        switch engine {
        case .sqlite:
            // No round trips: a statement per row is as fast as it gets.
            for endpointID in changes.releasing {
                try run(
                    "DELETE FROM fanout_holds WHERE message_seq = ? AND number = ? AND endpoint_id = ?",
                    [.integer(messageSeq), .int(number), .text(endpointID)])
            }
            for hold in changes.holding {
                try run(
                    """
                    INSERT INTO fanout_holds (message_seq, number, endpoint_id, reason) VALUES (?, ?, ?, ?)
                    ON CONFLICT (message_seq, number, endpoint_id) DO UPDATE SET reason = excluded.reason
                    """,
                    [.integer(messageSeq), .int(number), .text(hold.endpointID), .text(hold.reason)])
            }
        case .postgres:
            // A statement per row would be a network round trip per row: arrays, one statement each.
            if !changes.releasing.isEmpty {
                try run(
                    "DELETE FROM fanout_holds WHERE message_seq = ? AND number = ? AND endpoint_id = ANY(?::text[])",
                    [.integer(messageSeq), .int(number), .textArray(changes.releasing)])
            }
            if !changes.holding.isEmpty {
                // One row per endpoint (the last reason wins), as ON CONFLICT allows each row once.
                var reasons: [String: String] = [:]
                for hold in changes.holding { reasons[hold.endpointID] = hold.reason }
                let ids = Array(reasons.keys)
                try run(
                    """
                    INSERT INTO fanout_holds (message_seq, number, endpoint_id, reason)
                    SELECT ?, ?, i.id, i.reason FROM unnest(?::text[], ?::text[]) AS i (id, reason)
                    ON CONFLICT (message_seq, number, endpoint_id) DO UPDATE SET reason = excluded.reason
                    """,
                    [.integer(messageSeq), .int(number), .textArray(ids), .textArray(ids.map { reasons[$0]! })])
            }
        }
    }

    /// The recipients a chunk holds, with their endpoints now (a deleted one: nil).
    func heldRecipients(_ chunk: FanOutChunk) throws(StoreError) -> [HeldRecipient] {
        try rows(
            """
            SELECT h.endpoint_id, h.reason, \(Columns.endpoint) FROM fanout_holds h
            JOIN messages m ON m.seq = h.message_seq
            LEFT JOIN endpoints e ON e.id = h.endpoint_id
            WHERE m.id = ? AND h.number = ? ORDER BY h.endpoint_id
            """,
            [.text(chunk.message.id), .int(chunk.number)]
        ) { row in
            HeldRecipient(
                hold: FanOutHold(endpointID: row.text(0), reason: row.text(1)),
                endpoint: row.isNull(2) ? nil : Columns.endpoint(row, from: 2).record)
        }
    }

    /// Completes (or expires, if any chunk expired) a message whose chunks are all planned and done.
    private func finishIfDone(messageSeq: Int64) throws(StoreError) {
        let status = try row(
            """
            SELECT m.planned,
                   (SELECT count(*) FROM fanout_chunks c WHERE c.message_seq = m.seq AND c.state = 'working'),
                   (SELECT count(*) FROM fanout_chunks c WHERE c.message_seq = m.seq AND c.state = 'expired')
            FROM messages m WHERE m.seq = ?
            """,
            [.integer(messageSeq)]
        ) { (planned: $0.bool(0), working: $0.int64(1), expired: $0.int64(2)) }
        guard let status, status.planned, status.working == 0 else { return }
        try run(
            "UPDATE messages SET state = ? WHERE seq = ?",
            [
                .text(status.expired > 0 ? MessageState.expired.rawValue : MessageState.completed.rawValue),
                .integer(messageSeq),
            ])
    }

    /// Lets other instances claim `owner`'s unfinished chunks at once (a graceful stop).
    func releaseFanOutLeases(owner: String) throws(StoreError) {
        var pattern = ""
        for character in owner {
            if character == "%" || character == "_" || character == "\\" { pattern.append("\\") }
            pattern.append(character)
        }
        try run(
            "UPDATE fanout_chunks SET lease_expires_at = 0 WHERE lease_owner LIKE ? ESCAPE '\\' AND state = 'working'",
            [.text(pattern + "/%")])
    }

    /// Makes every unfinished chunk claimable (SQLite at open: one process owns the file, so no
    /// lease from a previous run can still be held).
    func releaseAllFanOutLeases() throws(StoreError) {
        try run("UPDATE fanout_chunks SET lease_expires_at = 0 WHERE state = 'working'", [])
    }
}
