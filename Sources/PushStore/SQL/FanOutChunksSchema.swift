/// Schema step 2 of both engines: fan-out split into leased chunks.
///
/// `messages` gains the planning state (`planned_after`: the subscription seq the next chunk starts
/// after; `chunks`: how many are planned; `planned`: 1 once the last one is). A message's counts are
/// its row's (non-zero only for messages from before this step) plus its chunks'. `messages.cursor`
/// is no longer written.
enum FanOutChunksSchema {
    static let sqlite = """
        ALTER TABLE messages ADD COLUMN planned_after INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN chunks INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN planned INTEGER NOT NULL DEFAULT 0 CHECK (planned IN (0, 1));
        \(chunksTable(id: "INTEGER"))
        """

    static let postgres = """
        ALTER TABLE messages ADD COLUMN planned_after bigint NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN chunks integer NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN planned integer NOT NULL DEFAULT 0 CHECK (planned IN (0, 1));
        \(chunksTable(id: "bigint"))
        """

    /// The chunk table: a range (range_after, range_last] of the topic's subscription seqs (range_last
    /// NULL: to the end), the resume cursor, the lease and the counts so far.
    private static func chunksTable(id: String) -> String {
        """
        CREATE TABLE fanout_chunks (
            message_seq \(id) NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
            number integer NOT NULL,
            range_after \(id) NOT NULL,
            range_last \(id),
            cursor \(id) NOT NULL,
            state text NOT NULL CHECK (state IN ('working', 'completed', 'expired')),
            lease_owner text NOT NULL,
            lease_expires_at \(id) NOT NULL,
            total \(id) NOT NULL,
            delivered \(id) NOT NULL,
            rejected \(id) NOT NULL,
            failed \(id) NOT NULL,
            skipped \(id) NOT NULL,
            PRIMARY KEY (message_seq, number)
        );
        -- Claiming: the few unfinished chunks, by lease expiry.
        CREATE INDEX fanout_chunks_working ON fanout_chunks (lease_expires_at) WHERE state = 'working';
        """
    }

    /// A message left mid-fan-out by an older version resumes where its page cursor was: its next
    /// chunk is planned after that subscription (its counts so far stay on its row).
    static func adoptPageCursors(_ database: some SQLDatabase) throws(StoreError) {
        let unfinished = try database.rows(
            "SELECT seq, cursor FROM messages WHERE state IN ('accepted', 'fanningOut') AND topic IS NOT NULL", []
        ) { (seq: $0.int64(0), cursor: $0.text(1)) }
        for message in unfinished where !message.cursor.isEmpty {
            let after = try PageCursor.decode(message.cursor, as: .fanOut)
            try database.run(
                "UPDATE messages SET planned_after = ? WHERE seq = ?", [.integer(after), .integer(message.seq)])
        }
    }
}
