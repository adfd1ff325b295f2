/// Message queries; see `Store` for the semantics.
extension SQLDatabase {
    func insertMessage(_ message: MessageRecord) throws(StoreError) {
        guard message.target != nil else {
            throw StoreError(.invalidArgument, message: "a message needs exactly one of topic, endpoint id and user id")
        }
        guard message.state == .accepted || (message.state == .scheduled && message.deliverAt > 0) else {
            throw StoreError(.invalidArgument, message: "a new message is accepted, or scheduled with a deliver_at")
        }
        try transaction { () throws(StoreError) in
            if try row("SELECT 1 FROM messages WHERE id = ?", [.text(message.id)], { _ in true }) != nil {
                throw StoreError(
                    .alreadyExists, existingID: message.id, message: "message \(message.id) already exists")
            }
            let seq = try row(
                """
                INSERT INTO messages (id, topic, endpoint_id, user_id, apps, message, message_structure, published_at,
                                      deliver_at, max_per_second, paced_until, state, total, delivered, rejected,
                                      failed, skipped, cancelled, cursor, notify)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, 0, '', ?) RETURNING seq
                """,
                [
                    .text(message.id), .text(message.topic), .text(message.endpointID), .text(message.userID),
                    .text(Columns.appsColumn(message.apps)), .text(message.message), .text(message.messageStructure),
                    .integer(message.publishedAt), .integer(message.deliverAt), .integer(Int64(message.maxPerSecond)),
                    .text(message.state.rawValue), .integer(message.total), .integer(message.delivered),
                    .integer(message.rejected), .integer(message.failed), .integer(message.skipped),
                    .text(Columns.appsColumn(message.notify)),
                ]
            ) { $0.int64(0) }
            guard let seq else {
                throw StoreError(.internal, message: "inserting message \(message.id) returned no seq")
            }
            for (name, value) in message.attributes.sorted(by: { $0.key < $1.key }) {
                try run(
                    "INSERT INTO message_attributes (message_seq, name, value) VALUES (?, ?, ?)",
                    [.integer(seq), .text(name), .text(value)])
            }
        }
    }

    func message(id: String) throws(StoreError) -> MessageRecord {
        let found = try row("SELECT \(Columns.message) FROM messages WHERE id = ?", [.text(id)]) {
            (row: Row) throws(StoreError) in try Columns.message(row)
        }
        guard let found else { throw StoreError(.notFound, message: "message \(id) does not exist") }
        return try complete(found)
    }

    /// The message with this seq (a chunk's), complete.
    func message(seq: Int64) throws(StoreError) -> MessageRecord {
        let found = try row("SELECT \(Columns.message) FROM messages WHERE seq = ?", [.integer(seq)]) {
            (row: Row) throws(StoreError) in try Columns.message(row)
        }
        guard let found else { throw StoreError(.notFound, message: "message #\(seq) does not exist") }
        return try complete(found)
    }

    func unfinishedMessages() throws(StoreError) -> [MessageRecord] {
        // Same condition as the partial index messages_unfinished, so it can be used.
        let found = try rows(
            "SELECT \(Columns.message) FROM messages WHERE state IN ('accepted', 'fanningOut') ORDER BY seq", []
        ) { (row: Row) throws(StoreError) in try Columns.message(row) }
        var messages: [MessageRecord] = []
        messages.reserveCapacity(found.count)
        for message in found { messages.append(try complete(message)) }
        return messages
    }

    /// Adds the chunks' counts and the attributes to a message row.
    private func complete(_ found: (seq: Int64, record: MessageRecord)) throws(StoreError) -> MessageRecord {
        var message = found.record
        let sums = try row(
            """
            SELECT coalesce(sum(total), 0), coalesce(sum(delivered), 0), coalesce(sum(rejected), 0),
                   coalesce(sum(failed), 0), coalesce(sum(skipped), 0), coalesce(sum(holds), 0),
                   coalesce(sum(cancelled), 0)
            FROM fanout_chunks WHERE message_seq = ?
            """, [.integer(found.seq)]
        ) {
            (
                ProgressCounts(
                    total: $0.int64(0), delivered: $0.int64(1), rejected: $0.int64(2), failed: $0.int64(3),
                    skipped: $0.int64(4), cancelled: $0.int64(6)),
                holds: $0.int64(5)
            )
        }
        if let (sums, holds) = sums {
            message.total += sums.total
            message.delivered += sums.delivered
            message.rejected += sums.rejected
            message.failed += sums.failed
            message.skipped += sums.skipped
            message.cancelled += sums.cancelled
            message.waitingForProvider = holds
        }
        let pairs = try rows(
            "SELECT name, value FROM message_attributes WHERE message_seq = ?", [.integer(found.seq)]
        ) { (name: $0.text(0), value: $0.text(1)) }
        for (name, value) in pairs { message.attributes[name] = value }
        return message
    }

    /// Messages newest first, optionally in one state and/or to one topic; the cursor is the seq
    /// the next page starts below.
    func listMessages(state: MessageState?, topic: String?, cursor: String?, limit: Int)
        throws(StoreError) -> Page<MessageRecord>
    {
        try PageCursor.check(limit: limit)
        let before = try PageCursor.decode(cursor, as: .messages)
        var filter = SQLConditions("seq < ?", .integer(before == 0 ? .max : before))
        filter.add("state = ?", ifGiven: state?.rawValue)
        // The partial index of the state's kind, its predicate repeated so it is used (SQLite uses a
        // partial index only when the query holds its WHERE): `completed` goes by the primary key.
        switch state {
        case .scheduled, .expired, .cancelled: filter.add("state IN (\(UsersAndSchedulesSchema.rareStates))")
        case .accepted, .fanningOut: filter.add("state IN ('accepted', 'fanningOut')")
        case .completed, nil: break
        }
        filter.add("topic = ?", ifGiven: topic)
        let fetched = try rows(
            "SELECT \(Columns.message) FROM messages WHERE \(filter.sql) ORDER BY seq DESC LIMIT ?",
            filter.values + [.int(limit + 1)]
        ) { (row: Row) throws(StoreError) in try Columns.message(row) }
        let page = PageCursor.page(fetched, limit: limit, kind: .messages) { $0.seq }
        var messages: [MessageRecord] = []
        messages.reserveCapacity(page.items.count)
        for found in page.items { messages.append(try complete(found)) }
        return Page(items: messages, nextCursor: page.nextCursor)
    }

    /// The message's state alone (what a chunk being worked polls for a cancel).
    func messageState(id: String) throws(StoreError) -> MessageState {
        let text = try row("SELECT state FROM messages WHERE id = ?", [.text(id)]) { $0.text(0) }
        guard let text else { throw StoreError(.notFound, message: "message \(id) does not exist") }
        guard let state = MessageState(rawValue: text) else {
            throw StoreError(.internal, message: "message \(id) has an unknown state \"\(text)\"")
        }
        return state
    }

    /// Reserves `count` sends of a rate-capped message: its shared clock `paced_until` (µs) moves
    /// `count / maxPerSecond` seconds past the later of itself and now, and the reservation's slot
    /// starts where it was. Slots never overlap, so every instance's sends together keep to the cap
    /// (a virtual-scheduling token bucket). Answers the slot's start, Unix µs.
    func reservePace(messageID: String, count: Int, maxPerSecond: Int32, nowMicros: Int64) throws(StoreError) -> Int64 {
        guard count > 0, maxPerSecond > 0 else {
            throw StoreError(.invalidArgument, message: "a pace reservation needs a count and a rate")
        }
        // Rounded up, so rounding never lets more than the cap through.
        let cost = (Int64(count) * 1_000_000 + Int64(maxPerSecond) - 1) / Int64(maxPerSecond)
        let later = engine == .postgres ? "GREATEST" : "max"
        let end = try row(
            "UPDATE messages SET paced_until = \(later)(paced_until, ?) + ? WHERE id = ? RETURNING paced_until",
            [.integer(nowMicros), .integer(cost), .text(messageID)]
        ) { $0.int64(0) }
        guard let end else { throw StoreError(.notFound, message: "message \(messageID) does not exist") }
        return end - cost
    }
}
