/// Schema step 3 of both engines: recipients held for their provider across an outage.
///
/// `fanout_holds` lists a chunk's recipients whose provider could not take the message (their
/// endpoint ids and the last failure); `fanout_chunks.holds` is their count (what `GetMessage`
/// reports as waiting for the provider), `parkings` how often the chunk parked to wait (its backoff).
/// A parked chunk is an unfinished one with no lease holder whose `lease_expires_at` is when it
/// may be claimed again.
enum FanOutHoldsSchema {
    static let sqlite = sql(id: "INTEGER")
    static let postgres = sql(id: "bigint")

    private static func sql(id: String) -> String {
        """
        ALTER TABLE fanout_chunks ADD COLUMN holds \(id) NOT NULL DEFAULT 0;
        ALTER TABLE fanout_chunks ADD COLUMN parkings integer NOT NULL DEFAULT 0;
        CREATE TABLE fanout_holds (
            message_seq \(id) NOT NULL,
            number integer NOT NULL,
            endpoint_id text NOT NULL,
            reason text NOT NULL,
            PRIMARY KEY (message_seq, number, endpoint_id),
            FOREIGN KEY (message_seq, number) REFERENCES fanout_chunks (message_seq, number) ON DELETE CASCADE
        );
        """
    }
}
