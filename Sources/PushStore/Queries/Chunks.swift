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
    func claimFanOutChunk(_ policy: FanOutLeasePolicy, filter: FanOutClaimFilter = .any, now: Int64)
        throws(StoreError) -> FanOutChunk?
    {
        guard policy.chunkSize >= 1, policy.leaseMillis >= 1 else {
            throw StoreError(.invalidArgument, message: "chunk size and lease must be positive")
        }
        return try transaction { () throws(StoreError) -> FanOutChunk? in
            // Scheduled messages whose time came join the queue (through messages_due: no scan).
            try run(
                "UPDATE \(engine.table("messages", indexedBy: "messages_due")) SET state = 'accepted' "
                    + "WHERE state = 'scheduled' AND deliver_at <= ?",
                [.integer(now)])
            if let chunk = try takeOverExpired(policy, filter: filter, now: now) { return chunk }
            return try planNext(policy, filter: filter, now: now)
        }
    }

    private func takeOverExpired(_ policy: FanOutLeasePolicy, filter: FanOutClaimFilter, now: Int64)
        throws(StoreError) -> FanOutChunk?
    {
        // A chunk of a cancelled message whose holder died is ended here, not worked: find the next.
        while true {
            guard let expired = try expiredChunk(filter: filter, now: now) else { return nil }
            let message = try self.message(seq: expired.messageSeq)
            if message.state == .cancelled {
                // The message too, as its other finishers lock it (the last chunk to end sees the
                // others ended, and tells the message's webhooks once); if one of them holds it now,
                // this claim leaves the chunk to the next rather than wait (the locks are taken in
                // the other order there).
                guard try lockMessageIfFree(seq: expired.messageSeq) else { return nil }
                if try cancelChunk(message, seq: expired.messageSeq, number: expired.number) {
                    try appendFinished(messageSeq: expired.messageSeq, now: now)
                }
                continue
            }
            return try takeOver(expired, message: message, policy, now: now)
        }
    }

    private typealias ExpiredChunk = (
        messageSeq: Int64, number: Int64, cursor: Int64, last: Int64?, holds: Int64, parkings: Int64
    )

    /// Whether a message matching `filter` has chunks left to plan, locked or not: after a claim
    /// found none it could lock, whether one was passed over for its lock.
    func messageLeftToPlan(filter: FanOutClaimFilter) throws(StoreError) -> Bool {
        let (extra, values) = Self.conditions(filter)
        return try row(
            "SELECT 1 FROM \(engine.table("messages m", indexedBy: "messages_to_plan")) WHERE \(Self.leftToPlan)\(extra) LIMIT 1",
            values
        ) { _ in true } ?? false
    }

    /// The messages a claim plans chunks of (`m`): the same for the claim and for the check above.
    private static var leftToPlan: String { "m.state IN ('accepted', 'fanningOut') AND m.planned = 0" }

    /// The conditions a claim's filter puts on its messages (`m`), with their parameters.
    private static func conditions(_ filter: FanOutClaimFilter) -> (sql: String, values: [SQLValue]) {
        var sql = filter.paced ? "" : " AND m.max_per_second = 0"
        if !filter.skippingMessages.isEmpty {
            sql +=
                " AND m.id NOT IN ("
                + Array(repeating: "?", count: filter.skippingMessages.count).joined(separator: ", ")
                + ")"
        }
        return (sql, filter.skippingMessages.map(SQLValue.text))
    }

    private func expiredChunk(filter: FanOutClaimFilter, now: Int64) throws(StoreError) -> ExpiredChunk? {
        // Joined to their messages for the filter; on PostgreSQL locking only the chunk.
        let (extra, values) = Self.conditions(filter)
        return try row(
            """
            SELECT c.message_seq, c.number, c.cursor, c.range_last, c.holds, c.parkings
            FROM fanout_chunks c JOIN messages m ON m.seq = c.message_seq
            WHERE c.state = 'working' AND c.lease_expires_at <= ?\(extra) ORDER BY c.message_seq, c.number LIMIT 1
            """ + (engine == .postgres ? " FOR UPDATE OF c SKIP LOCKED" : ""),
            [.integer(now)] + values
        ) {
            (
                messageSeq: $0.int64(0), number: $0.int64(1), cursor: $0.int64(2),
                last: $0.isNull(3) ? nil : $0.int64(3),
                holds: $0.int64(4), parkings: $0.int64(5)
            )
        }
    }

    private func takeOver(_ expired: ExpiredChunk, message: MessageRecord, _ policy: FanOutLeasePolicy, now: Int64)
        throws(StoreError) -> FanOutChunk
    {
        let expiresAt = now + policy.leaseMillis
        let claim = Self.newClaim(policy)
        try run(
            "UPDATE fanout_chunks SET lease_owner = ?, lease_expires_at = ? WHERE message_seq = ? AND number = ?",
            [.text(claim), .integer(expiresAt), .integer(expired.messageSeq), .integer(expired.number)])
        return FanOutChunk(
            message: message, number: Int(expired.number),
            cursor: Self.position(expired.cursor), end: expired.last.map { PageCursor.encode(.fanOut, after: $0) },
            leaseExpiresAt: expiresAt, claim: claim, holds: Int(expired.holds), parkings: Int(expired.parkings))
    }

    private func planNext(_ policy: FanOutLeasePolicy, filter: FanOutClaimFilter, now: Int64)
        throws(StoreError) -> FanOutChunk?
    {
        let (extra, values) = Self.conditions(filter)
        let candidate = try row(
            """
            SELECT m.seq, m.planned_after, m.chunks FROM \(engine.table("messages m", indexedBy: "messages_to_plan"))
            WHERE \(Self.leftToPlan)\(extra) ORDER BY m.chunks, m.seq LIMIT 1
            """ + engine.forUpdateSkipLocked,
            values
        ) { (seq: $0.int64(0), after: $0.int64(1), chunks: $0.int64(2)) }
        guard let candidate else { return nil }
        let message = try self.message(seq: candidate.seq)
        // A direct publish is one chunk; a topic's or user's chunk ends `chunkSize` recipients on, or
        // runs to the end when fewer are left (the message's last chunk).
        var last: Int64? = nil
        if let target = message.target, target.isFannedOut {
            // The chunkSize-th recipient after the planning position and the one after it: if both
            // exist the chunk ends at the first; otherwise the rest is the last chunk.
            let recipients = RecipientRows(target)
            let bounds = try rows(
                """
                SELECT r.seq FROM \(recipients.from) WHERE \(recipients.condition) AND r.seq > ?
                ORDER BY r.seq LIMIT 2 OFFSET ?
                """,
                recipients.values + [.integer(candidate.after), .int(policy.chunkSize - 1)]
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
        var started = message
        started.state = .fanningOut
        return FanOutChunk(
            message: started, number: Int(candidate.chunks),
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
        holds changes: FanOutHoldChanges, records: FanOutRecords = .none, now: Int64
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
        let cancelling = state == .cancelled
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
            if finishing && !cancelling && held > 0 {
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
                    cancelled = cancelled + ?, holds = ?, parkings = parkings + ?,
                    lease_owner = CASE WHEN ? = 1 THEN '' ELSE lease_owner END
                WHERE message_seq = ? AND number = ?
                """,
                [
                    .integer(position), .text(finishing && !cancelling ? state.rawValue : "working"),
                    .integer(changes.parkUntil ?? (now + policy.leaseMillis)), .integer(counts.total),
                    .integer(counts.delivered), .integer(counts.rejected), .integer(counts.failed),
                    .integer(counts.skipped), .integer(counts.cancelled), .integer(held), .int(parked ? 1 : 0),
                    .int(parked ? 1 : 0), .integer(messageSeq), .int(number),
                ])
            for disable in records.disable.sorted(by: { $0.endpointID < $1.endpointID }) {
                _ = try disableEndpoint(id: disable.endpointID, reason: disable.reason)
            }
            try appendDeliveryLog(records.deliveries)
            try appendOutbox(records.events)
            if cancelling {
                if try cancelChunk(try message(seq: messageSeq), seq: messageSeq, number: Int64(number)) {
                    try appendFinished(messageSeq: messageSeq, now: now)
                }
                return 0
            }
            if finishing, try finishIfDone(messageSeq: messageSeq) {
                try appendFinished(messageSeq: messageSeq, now: now)
            }
            return held
        }
    }

    /// Ends a chunk of a cancelled message: the recipients after its cursor in its range (a direct
    /// publish's one, if it has no result) and those it holds are counted `cancelled`. Answers
    /// whether that was the message's last chunk being worked (it is finished: the caller tells its
    /// webhooks).
    private func cancelChunk(_ message: MessageRecord, seq messageSeq: Int64, number: Int64) throws(StoreError)
        -> Bool
    {
        let chunk = try row(
            "SELECT cursor, range_last, total FROM fanout_chunks WHERE message_seq = ? AND number = ?",
            [.integer(messageSeq), .integer(number)]
        ) { (cursor: $0.int64(0), last: $0.isNull(1) ? Int64.max : $0.int64(1), total: $0.int64(2)) }
        guard let chunk else { return false }
        // A message without a single target (never written so) has nothing more to count; its chunk
        // still ends, or every claim would find it again.
        var unsent: Int64 = 0
        if let target = message.target {
            unsent =
                target.isFannedOut
                ? try recipients(of: target, after: chunk.cursor, through: chunk.last) : (chunk.total == 0 ? 1 : 0)
        }
        let held =
            try row(
                "SELECT count(*) FROM fanout_holds WHERE message_seq = ? AND number = ?",
                [.integer(messageSeq), .integer(number)]
            ) { $0.int64(0) } ?? 0
        try run(
            "DELETE FROM fanout_holds WHERE message_seq = ? AND number = ?", [.integer(messageSeq), .integer(number)])
        try run(
            """
            UPDATE fanout_chunks SET state = 'completed', total = total + ?, cancelled = cancelled + ?, holds = 0,
                lease_owner = '' WHERE message_seq = ? AND number = ?
            """,
            [.integer(unsent), .integer(unsent + held), .integer(messageSeq), .integer(number)])
        return try workingChunks(messageSeq: messageSeq) == 0
    }

    /// How many recipients of a topic or user lie in (after, last].
    private func recipients(of target: MessageTarget, after: Int64, through last: Int64) throws(StoreError) -> Int64 {
        let rows = RecipientRows(target)
        return try row(
            "SELECT count(*) FROM \(rows.from) WHERE \(rows.condition) AND r.seq > ? AND r.seq <= ?",
            rows.values + [.integer(after), .integer(last)]
        ) { $0.int64(0) } ?? 0
    }

    /// Cancels a message (see `Store.cancelMessage`): nothing more is planned, what was never planned
    /// is counted on its row, and chunks nobody works now (parked, or their holder's lease ran out)
    /// are ended here; chunks being worked end at their holder's next page.
    func cancelMessage(id: String, notify: [String], now: Int64) throws(StoreError) -> MessageRecord {
        try transaction { () throws(StoreError) -> MessageRecord in
            let found = try row(
                "SELECT seq, state, planned, planned_after FROM messages WHERE id = ?" + engine.forUpdate, [.text(id)]
            ) { (seq: $0.int64(0), state: $0.text(1), planned: $0.bool(2), after: $0.int64(3)) }
            guard let found else { throw StoreError(.notFound, message: "message \(id) does not exist") }
            let message = try self.message(seq: found.seq)
            guard !message.state.isFinished, let target = message.target else {
                throw StoreError(
                    .failedPrecondition,
                    message: "message \(id) is \(message.state.rawValue) already; only a scheduled or running one "
                        + "can be cancelled")
            }
            var unplanned: Int64 = 0
            if !found.planned {
                unplanned =
                    target.isFannedOut ? try recipients(of: target, after: found.after, through: .max) : 1
            }
            try run(
                """
                UPDATE messages SET state = 'cancelled', planned = 1, total = total + ?, cancelled = cancelled + ?
                WHERE seq = ?
                """,
                [.integer(unplanned), .integer(unplanned), .integer(found.seq)])
            let idle = try rows(
                """
                SELECT number FROM fanout_chunks WHERE message_seq = ? AND state = 'working'
                AND (lease_owner = '' OR lease_expires_at <= ?)
                """ + engine.forUpdate,
                [.integer(found.seq), .integer(now)]
            ) { $0.int64(0) }
            var cancelled = message
            cancelled.state = .cancelled
            for number in idle { _ = try cancelChunk(cancelled, seq: found.seq, number: number) }
            let answer = try self.message(seq: found.seq)
            // The cancel's own event (with the count as of now), then the end if nothing is still
            // being worked (no chunk at all, or only idle ones).
            try appendCancelled(messageID: id, cancelled: answer.cancelled, webhooks: notify, now: now)
            if try workingChunks(messageSeq: found.seq) == 0 {
                try appendFinished(messageSeq: found.seq, now: now)
            }
            return answer
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

    /// Locks the message's row until the transaction ends unless another transaction holds it
    /// (PostgreSQL; SQLite's write lock covers it): whether it did.
    private func lockMessageIfFree(seq: Int64) throws(StoreError) -> Bool {
        guard engine == .postgres else { return true }
        return try row("SELECT 1 FROM messages WHERE seq = ? FOR UPDATE SKIP LOCKED", [.integer(seq)]) { _ in true }
            != nil
    }

    /// Chunks of the message still being worked (or parked).
    private func workingChunks(messageSeq: Int64) throws(StoreError) -> Int64 {
        try row(
            "SELECT count(*) FROM fanout_chunks WHERE message_seq = ? AND state = 'working'", [.integer(messageSeq)]
        ) { $0.int64(0) } ?? 0
    }

    /// Completes (or expires, if any chunk expired) a message whose chunks are all planned and done;
    /// answers whether it is finished now (a cancelled one stays cancelled, and is finished too).
    private func finishIfDone(messageSeq: Int64) throws(StoreError) -> Bool {
        let status = try row(
            """
            SELECT m.planned,
                   (SELECT count(*) FROM fanout_chunks c WHERE c.message_seq = m.seq AND c.state = 'working'),
                   (SELECT count(*) FROM fanout_chunks c WHERE c.message_seq = m.seq AND c.state = 'expired')
            FROM messages m WHERE m.seq = ?
            """,
            [.integer(messageSeq)]
        ) { (planned: $0.bool(0), working: $0.int64(1), expired: $0.int64(2)) }
        guard let status, status.planned, status.working == 0 else { return false }
        // A message cancelled while its last chunk finished stays cancelled.
        try run(
            "UPDATE messages SET state = ? WHERE seq = ? AND state <> 'cancelled'",
            [
                .text(status.expired > 0 ? MessageState.expired.rawValue : MessageState.completed.rawValue),
                .integer(messageSeq),
            ])
        return true
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
