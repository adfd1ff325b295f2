/// Schema step 4 of both engines: the apps' broadcast channels (``ChannelRecord``). `seq` orders
/// them for page cursors; (app, channel_id) is the identity, as APNs's ids are per app.
enum ChannelsSchema {
    static let sqlite = sql(seq: "INTEGER PRIMARY KEY")
    static let postgres = sql(seq: "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY")

    private static func sql(seq: String) -> String {
        """
        CREATE TABLE channels (
            seq \(seq),
            app text NOT NULL,
            channel_id text NOT NULL,
            storage_policy integer NOT NULL CHECK (storage_policy IN (0, 1)),
            created_at bigint NOT NULL,
            UNIQUE (app, channel_id)
        );
        """
    }
}
