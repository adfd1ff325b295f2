/// The schema's history, oldest first (see `Migration`).
///
/// Tables use an `INTEGER PRIMARY KEY` (`seq`, the rowid) for order and joins, and a random text
/// `id` as the public identity: rowids give creation order and cheap, stable page cursors, while
/// public ids reveal nothing about counts and stay valid if data moves to another engine.
enum Schema {
    static var migrations: [Migration] {
        [
            Migration(
                version: 1, name: "registry and messages",
                sql: """
                    CREATE TABLE endpoints (
                        seq INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        app TEXT NOT NULL,
                        token TEXT NOT NULL,
                        enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
                        custom_user_data TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        disabled_reason TEXT NOT NULL
                    );
                    -- SNS identity of an endpoint: one per token per app.
                    CREATE UNIQUE INDEX endpoints_app_token ON endpoints (app, token);
                    -- Listing one app's endpoints in creation order (the rowid is the index's last column).
                    CREATE INDEX endpoints_app ON endpoints (app);

                    CREATE TABLE topics (
                        seq INTEGER PRIMARY KEY,
                        name TEXT NOT NULL UNIQUE
                    );

                    CREATE TABLE subscriptions (
                        seq INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        topic_seq INTEGER NOT NULL REFERENCES topics (seq) ON DELETE CASCADE,
                        endpoint_seq INTEGER NOT NULL REFERENCES endpoints (seq) ON DELETE CASCADE,
                        filter_policy_json TEXT NOT NULL
                    );
                    -- One subscription per (topic, endpoint).
                    CREATE UNIQUE INDEX subscriptions_topic_endpoint ON subscriptions (topic_seq, endpoint_seq);
                    -- Fan-out pages: (topic_seq, seq) ranges in order, and cascading topic deletes.
                    CREATE INDEX subscriptions_topic ON subscriptions (topic_seq);
                    -- Cascading endpoint deletes and listing by endpoint.
                    CREATE INDEX subscriptions_endpoint ON subscriptions (endpoint_seq);

                    -- No references to endpoints or topics: a message's history outlives its target.
                    CREATE TABLE messages (
                        seq INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        topic TEXT,
                        endpoint_id TEXT,
                        message TEXT NOT NULL,
                        message_structure TEXT NOT NULL,
                        published_at INTEGER NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('accepted', 'fanningOut', 'completed', 'expired')),
                        total INTEGER NOT NULL,
                        delivered INTEGER NOT NULL,
                        rejected INTEGER NOT NULL,
                        failed INTEGER NOT NULL,
                        skipped INTEGER NOT NULL,
                        cursor TEXT NOT NULL,
                        CHECK ((topic IS NULL) <> (endpoint_id IS NULL))
                    );
                    -- Resume after restart: only the few unfinished messages are indexed.
                    CREATE INDEX messages_unfinished ON messages (seq) WHERE state IN ('accepted', 'fanningOut');

                    CREATE TABLE message_attributes (
                        message_seq INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        value TEXT NOT NULL,
                        PRIMARY KEY (message_seq, name)
                    ) WITHOUT ROWID;
                    """),
            Migration(version: 2, name: "leased fan-out chunks") { (database: Database) throws(StoreError) in
                try database.execute(FanOutChunksSchema.sqlite)
                try FanOutChunksSchema.adoptPageCursors(database)
            },
            Migration(version: 3, name: "fan-out holds") { (database: Database) throws(StoreError) in
                try database.execute(FanOutHoldsSchema.sqlite)
            },
            Migration(version: 4, name: "broadcast channels") { (database: Database) throws(StoreError) in
                try database.execute(ChannelsSchema.sqlite)
            },
            Migration(version: 5, name: "filter policy scope") { (database: Database) throws(StoreError) in
                try database.execute(SubscriptionScopeSchema.sql)
            },
            Migration(version: 6, name: "messages to plan") { (database: Database) throws(StoreError) in
                try database.execute(MessagesToPlanSchema.sql)
            },
            Migration(version: 7, name: "users, schedules and cancelling", rebuildsTables: true) {
                (database: Database) throws(StoreError) in
                try database.execute(UsersAndSchedulesSchema.sqlite)
            },
            Migration(version: 8, name: "webhooks and the delivery log", sql: WebhooksAndDeliveryLogSchema.sqlite),
            // Fewer, smaller indexes for bulk loads, each row's inserts being most of an import's
            // time: (app, token) unique through a 16-byte digest of both (`TokenKey`, which says
            // why; every endpoint's key is computed here once: ~3 s per million endpoints), and one
            // unique index on (endpoint, topic) serving what (topic, endpoint) and (endpoint) did:
            // one subscription per pair, lookups of a pair and of an endpoint's, cascading deletes.
            Migration(
                version: 9, name: "token keys, one subscription index fewer",
                sql: """
                    ALTER TABLE endpoints ADD COLUMN token_key BLOB NOT NULL DEFAULT x'';
                    UPDATE endpoints SET token_key = \(TokenKey.sqlFunction)(app, token);
                    DROP INDEX endpoints_app_token;
                    CREATE UNIQUE INDEX endpoints_token_key ON endpoints (token_key);
                    DROP INDEX subscriptions_topic_endpoint;
                    DROP INDEX subscriptions_endpoint;
                    CREATE UNIQUE INDEX subscriptions_endpoint_topic ON subscriptions (endpoint_seq, topic_seq);
                    """),
        ]
    }
}
