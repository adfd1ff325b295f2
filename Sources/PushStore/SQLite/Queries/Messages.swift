/// Message and progress queries. They run on the store's queue; see `Store` for the semantics.
extension Database {
    func insertMessage(_ message: MessageRecord) throws(StoreError) {
        guard (message.topic == nil) != (message.endpointID == nil) else {
            throw StoreError(.invalidArgument, message: "a message needs exactly one of topic and endpoint id")
        }
        try transaction { () throws(StoreError) in
            if try row("SELECT 1 FROM messages WHERE id = ?", [.text(message.id)], { _ in true }) != nil {
                throw StoreError(
                    .alreadyExists, existingID: message.id, message: "message \(message.id) already exists")
            }
            try run(
                """
                INSERT INTO messages (id, topic, endpoint_id, message, message_structure, published_at, state,
                                      total, delivered, rejected, failed, skipped, cursor)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(message.id), .text(message.topic), .text(message.endpointID), .text(message.message),
                    .text(message.messageStructure), .integer(message.publishedAt), .text(message.state.rawValue),
                    .integer(message.total), .integer(message.delivered), .integer(message.rejected),
                    .integer(message.failed), .integer(message.skipped), .text(message.cursor),
                ])
            let seq = lastInsertRowID
            for (name, value) in message.attributes {
                try run(
                    "INSERT INTO message_attributes (message_seq, name, value) VALUES (?, ?, ?)",
                    [.integer(seq), .text(name), .text(value)])
            }
        }
    }

    func message(id: String) throws(StoreError) -> MessageRecord {
        let found = try row("SELECT \(Columns.message) FROM messages WHERE id = ?", [.text(id)]) {
            (row: Statement) throws(StoreError) in try Columns.message(row)
        }
        guard let found else { throw StoreError(.notFound, message: "message \(id) does not exist") }
        return try withAttributes(found)
    }

    func recordProgress(
        messageID: String, cursor: String, delivered: Int64, rejected: Int64, failed: Int64, skipped: Int64,
        total: Int64, state: MessageState
    ) throws(StoreError) {
        guard delivered >= 0, rejected >= 0, failed >= 0, skipped >= 0, total >= 0 else {
            throw StoreError(.invalidArgument, message: "progress counts must not be negative")
        }
        try transaction { () throws(StoreError) in
            let current = try row("SELECT seq, state FROM messages WHERE id = ?", [.text(messageID)]) {
                (seq: $0.int64(0), state: MessageState(rawValue: $0.text(1)))
            }
            guard let current else { throw StoreError(.notFound, message: "message \(messageID) does not exist") }
            if let state = current.state, state.isFinished {
                // A second fan-out of the same message (e.g. two resumers) must not double-count.
                throw StoreError(.conflict, message: "message \(messageID) is already \(state.rawValue)")
            }
            try run(
                """
                UPDATE messages SET total = total + ?, delivered = delivered + ?, rejected = rejected + ?,
                    failed = failed + ?, skipped = skipped + ?, cursor = ?, state = ?
                WHERE seq = ?
                """,
                [
                    .integer(total), .integer(delivered), .integer(rejected), .integer(failed), .integer(skipped),
                    .text(cursor), .text(state.rawValue), .integer(current.seq),
                ])
        }
    }

    func unfinishedMessages() throws(StoreError) -> [MessageRecord] {
        // Same condition as the partial index messages_unfinished, so SQLite can use it.
        let found = try rows(
            "SELECT \(Columns.message) FROM messages WHERE state IN ('accepted', 'fanningOut') ORDER BY seq"
        ) { (row: Statement) throws(StoreError) in try Columns.message(row) }
        var messages: [MessageRecord] = []
        messages.reserveCapacity(found.count)
        for message in found { messages.append(try withAttributes(message)) }
        return messages
    }

    private func withAttributes(_ found: (seq: Int64, record: MessageRecord)) throws(StoreError) -> MessageRecord {
        var message = found.record
        let pairs = try rows("SELECT name, value FROM message_attributes WHERE message_seq = ?", [.integer(found.seq)])
        {
            (name: $0.text(0), value: $0.text(1))
        }
        for (name, value) in pairs { message.attributes[name] = value }
        return message
    }
}
