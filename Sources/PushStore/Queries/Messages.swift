/// Message queries; see `Store` for the semantics.
extension SQLDatabase {
    func insertMessage(_ message: MessageRecord) throws(StoreError) {
        guard (message.topic == nil) != (message.endpointID == nil) else {
            throw StoreError(.invalidArgument, message: "a message needs exactly one of topic and endpoint id")
        }
        try transaction { () throws(StoreError) in
            if try row("SELECT 1 FROM messages WHERE id = ?", [.text(message.id)], { _ in true }) != nil {
                throw StoreError(
                    .alreadyExists, existingID: message.id, message: "message \(message.id) already exists")
            }
            let seq = try row(
                """
                INSERT INTO messages (id, topic, endpoint_id, message, message_structure, published_at, state,
                                      total, delivered, rejected, failed, skipped, cursor)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '') RETURNING seq
                """,
                [
                    .text(message.id), .text(message.topic), .text(message.endpointID), .text(message.message),
                    .text(message.messageStructure), .integer(message.publishedAt), .text(message.state.rawValue),
                    .integer(message.total), .integer(message.delivered), .integer(message.rejected),
                    .integer(message.failed), .integer(message.skipped),
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
                   coalesce(sum(failed), 0), coalesce(sum(skipped), 0), coalesce(sum(holds), 0)
            FROM fanout_chunks WHERE message_seq = ?
            """, [.integer(found.seq)]
        ) {
            (
                ProgressCounts(
                    total: $0.int64(0), delivered: $0.int64(1), rejected: $0.int64(2), failed: $0.int64(3),
                    skipped: $0.int64(4)),
                holds: $0.int64(5)
            )
        }
        if let (sums, holds) = sums {
            message.total += sums.total
            message.delivered += sums.delivered
            message.rejected += sums.rejected
            message.failed += sums.failed
            message.skipped += sums.skipped
            message.waitingForProvider = holds
        }
        let pairs = try rows(
            "SELECT name, value FROM message_attributes WHERE message_seq = ?", [.integer(found.seq)]
        ) { (name: $0.text(0), value: $0.text(1)) }
        for (name, value) in pairs { message.attributes[name] = value }
        return message
    }
}
