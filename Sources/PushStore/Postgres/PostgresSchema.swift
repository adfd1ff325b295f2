/// The PostgreSQL schema's history, step for step the same as SQLite's (`Schema`): the same tables,
/// columns, indexes and meanings, in PostgreSQL's types (`bigint` identities for `seq`), through
/// step 8; then each engine has a step of its own (SQLite's 9: token keys; PostgreSQL's 9: the
/// endpoints' copies on subscriptions). The applied step is kept in `pushgate_schema` (SQLite uses
/// `PRAGMA user_version`).
enum PostgresSchema {
    struct Step {
        let version: Int32
        let name: String
        let apply: (PostgresConnection) throws(StoreError) -> Void
    }

    static var steps: [Step] {
        [
            Step(version: 1, name: "registry and messages") { (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(registryAndMessages)
            },
            Step(version: 2, name: "leased fan-out chunks") { (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(FanOutChunksSchema.postgres)
                try FanOutChunksSchema.adoptPageCursors(connection)
            },
            Step(version: 3, name: "fan-out holds") { (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(FanOutHoldsSchema.postgres)
            },
            Step(version: 4, name: "broadcast channels") { (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(ChannelsSchema.postgres)
            },
            Step(version: 5, name: "filter policy scope") { (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(SubscriptionScopeSchema.sql)
            },
            Step(version: 6, name: "messages to plan") { (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(MessagesToPlanSchema.sql)
            },
            Step(version: 7, name: "users, schedules and cancelling") {
                (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(UsersAndSchedulesSchema.postgres)
            },
            Step(version: 8, name: "webhooks and the delivery log") {
                (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(WebhooksAndDeliveryLogSchema.postgres)
            },
            Step(version: 9, name: "endpoint copies on subscriptions") {
                (connection: PostgresConnection) throws(StoreError) in
                try connection.execute(SubscriptionDeliverySchema.postgres)
            },
        ]
    }

    private static let registryAndMessages = """
        CREATE TABLE endpoints (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            app text NOT NULL,
            token text NOT NULL,
            enabled integer NOT NULL CHECK (enabled IN (0, 1)),
            custom_user_data text NOT NULL,
            created_at bigint NOT NULL,
            disabled_reason text NOT NULL
        );
        -- SNS identity of an endpoint: one per token per app. On the token's MD5 rather than the token
        -- itself: an FCM token may be 4096 bytes, over a B-tree entry's limit (2704). Lookups match
        -- both (SQLEngine.tokenMatch).
        CREATE UNIQUE INDEX endpoints_app_token ON endpoints (app, md5(token));
        -- Listing one app's endpoints in creation order.
        CREATE INDEX endpoints_app ON endpoints (app, seq);

        CREATE TABLE topics (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name text NOT NULL UNIQUE
        );

        CREATE TABLE subscriptions (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            topic_seq bigint NOT NULL REFERENCES topics (seq) ON DELETE CASCADE,
            endpoint_seq bigint NOT NULL REFERENCES endpoints (seq) ON DELETE CASCADE,
            filter_policy_json text NOT NULL
        );
        -- One subscription per (topic, endpoint).
        CREATE UNIQUE INDEX subscriptions_topic_endpoint ON subscriptions (topic_seq, endpoint_seq);
        -- Fan-out pages and chunk planning: (topic_seq, seq) ranges in order.
        CREATE INDEX subscriptions_topic ON subscriptions (topic_seq, seq);
        -- Cascading endpoint deletes and listing by endpoint.
        CREATE INDEX subscriptions_endpoint ON subscriptions (endpoint_seq);

        -- No references to endpoints or topics: a message's history outlives its target.
        CREATE TABLE messages (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            id text NOT NULL UNIQUE,
            topic text,
            endpoint_id text,
            message text NOT NULL,
            message_structure text NOT NULL,
            published_at bigint NOT NULL,
            state text NOT NULL CHECK (state IN ('accepted', 'fanningOut', 'completed', 'expired')),
            total bigint NOT NULL,
            delivered bigint NOT NULL,
            rejected bigint NOT NULL,
            failed bigint NOT NULL,
            skipped bigint NOT NULL,
            cursor text NOT NULL,
            CHECK ((topic IS NULL) <> (endpoint_id IS NULL))
        );
        -- Resume and claim: only the few unfinished messages are indexed.
        CREATE INDEX messages_unfinished ON messages (seq) WHERE state IN ('accepted', 'fanningOut');

        CREATE TABLE message_attributes (
            message_seq bigint NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
            name text NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (message_seq, name)
        );
        """

    /// Arbitrary but fixed: the advisory lock that lets one instance at a time migrate.
    private static let migrationLock = "7370936271044017"

    /// Brings the database's schema up to date, each step in its own transaction with its version.
    /// Instances starting together take turns (an advisory lock), so each step runs once. A database
    /// newer than this build is refused (`incompatible`).
    @discardableResult
    static func migrate(_ connection: PostgresConnection, steps: [Step] = steps, upgradingExisting: Bool = true)
        throws(StoreError) -> [Int32]
    {
        try connection.execute("SELECT pg_advisory_lock(\(migrationLock))")
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock(\(migrationLock))") }
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS pushgate_schema (version integer NOT NULL); "
                + "INSERT INTO pushgate_schema SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM pushgate_schema)")
        let current = try version(connection)
        let known = steps.last?.version ?? 0
        guard current <= known else {
            throw StoreError(
                .incompatible,
                message: "\(connection.displayURL) has schema version \(current), newer than this build's \(known); "
                    + "use a newer Pushgate or a different database")
        }
        if !upgradingExisting,
            let refusal = StoreError.olderSchemaForTool(connection.displayURL, version: current, known: known)
        {
            throw refusal
        }
        var applied: [Int32] = []
        for step in steps where step.version > current {
            do {
                try connection.transaction { () throws(StoreError) in
                    try step.apply(connection)
                    try connection.run("UPDATE pushgate_schema SET version = ?", [.integer(Int64(step.version))])
                }
            } catch {
                throw StoreError(
                    error.code, message: "migration \(step.version) (\(step.name)) failed: \(error.message)")
            }
            applied.append(step.version)
        }
        return applied
    }

    /// The applied step (0 for a new database).
    static func version(_ connection: PostgresConnection) throws(StoreError) -> Int32 {
        Int32(truncatingIfNeeded: try connection.row("SELECT version FROM pushgate_schema", []) { $0.int64(0) } ?? 0)
    }
}
