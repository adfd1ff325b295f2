/// Schema step 6, the same on both engines: claiming picks the unplanned message with the fewest
/// chunks (`ORDER BY chunks, seq`); without this index each claim sorted every unfinished message,
/// so a backlog of n small Publishes cost n log n per claim (the bench's 50,000-message PublishBatch
/// backlog was delivered at ~90 messages/s). With it a claim reads the first row.
enum MessagesToPlanSchema {
    static let sql = """
        CREATE INDEX messages_to_plan ON messages (chunks, seq) WHERE planned = 0 AND state IN ('accepted', 'fanningOut')
        """
}
