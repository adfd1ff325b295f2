/// Schema step 7: users, scheduled and cancellable messages, rate caps.
///
/// - `endpoints.user_id` (`''`: none), indexed for Publish's user target and `ListEndpoints`.
/// - `messages` gains a third target (`user_id`, with the publisher's `apps` joined by newlines),
///   `deliver_at`, `max_per_second` and `paced_until` (the rate cap's shared clock, in µs: see
///   `reservePace`), a `cancelled` count for what was never planned, and the states `scheduled`
///   and `cancelled`; `fanout_chunks` gains a `cancelled` count.
/// - Indexes: due scheduled messages, and ListMessages by topic and by the rare states, newest
///   first. No index on the common states: one on (state, seq) cost a Publish two more index
///   updates per state change (PublishBatch answered ~10 % fewer messages a second); `accepted`
///   and `fanningOut` are listed through `messages_unfinished`, and `completed` — most messages —
///   by the primary key, newest first, where they are found at once.
///
/// SQLite cannot change a table's CHECK constraints, so it rebuilds `messages` (its documented
/// twelve-step procedure, with foreign keys off: see `Migration.rebuildsTables`); PostgreSQL
/// replaces the two constraints in place.
enum UsersAndSchedulesSchema {
    static let states = "'scheduled', 'accepted', 'fanningOut', 'completed', 'expired', 'cancelled'"

    /// The states a message is rarely in (and seldom leaves): indexed for ListMessages.
    static let rareStates = "'scheduled', 'expired', 'cancelled'"

    /// Shared by both engines: what is added, not rebuilt.
    private static func additions(integer: String) -> String {
        """
        ALTER TABLE endpoints ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
        CREATE INDEX endpoints_user ON endpoints (user_id, seq) WHERE user_id <> '';
        ALTER TABLE fanout_chunks ADD COLUMN cancelled \(integer) NOT NULL DEFAULT 0;
        """
    }

    private static let indexes = """
        CREATE INDEX messages_due ON messages (deliver_at) WHERE state = 'scheduled';
        CREATE INDEX messages_settled ON messages (state, seq) WHERE state IN (\(rareStates));
        CREATE INDEX messages_topic ON messages (topic, seq) WHERE topic IS NOT NULL;
        """

    static let sqlite = """
        \(additions(integer: "INTEGER"))
        CREATE TABLE messages_rebuilt (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            topic TEXT,
            endpoint_id TEXT,
            user_id TEXT,
            apps TEXT NOT NULL,
            message TEXT NOT NULL,
            message_structure TEXT NOT NULL,
            published_at INTEGER NOT NULL,
            deliver_at INTEGER NOT NULL,
            max_per_second INTEGER NOT NULL,
            paced_until INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN (\(states))),
            total INTEGER NOT NULL,
            delivered INTEGER NOT NULL,
            rejected INTEGER NOT NULL,
            failed INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            cancelled INTEGER NOT NULL,
            cursor TEXT NOT NULL,
            planned_after INTEGER NOT NULL DEFAULT 0,
            chunks INTEGER NOT NULL DEFAULT 0,
            planned INTEGER NOT NULL DEFAULT 0 CHECK (planned IN (0, 1)),
            CHECK ((topic IS NOT NULL) + (endpoint_id IS NOT NULL) + (user_id IS NOT NULL) = 1)
        );
        INSERT INTO messages_rebuilt (seq, id, topic, endpoint_id, user_id, apps, message, message_structure,
            published_at, deliver_at, max_per_second, paced_until, state, total, delivered, rejected, failed,
            skipped, cancelled, cursor, planned_after, chunks, planned)
        SELECT seq, id, topic, endpoint_id, NULL, '', message, message_structure, published_at, 0, 0, 0, state,
            total, delivered, rejected, failed, skipped, 0, cursor, planned_after, chunks, planned
        FROM messages;
        DROP TABLE messages;
        ALTER TABLE messages_rebuilt RENAME TO messages;
        CREATE INDEX messages_unfinished ON messages (seq) WHERE state IN ('accepted', 'fanningOut');
        \(MessagesToPlanSchema.sql);
        \(indexes)
        """

    static let postgres = """
        \(additions(integer: "bigint"))
        ALTER TABLE messages ADD COLUMN user_id text, ADD COLUMN apps text NOT NULL DEFAULT '',
            ADD COLUMN deliver_at bigint NOT NULL DEFAULT 0, ADD COLUMN max_per_second integer NOT NULL DEFAULT 0,
            ADD COLUMN paced_until bigint NOT NULL DEFAULT 0, ADD COLUMN cancelled bigint NOT NULL DEFAULT 0;
        DO $$
        DECLARE name text;
        BEGIN
            -- The state list and the two-target rule, whatever PostgreSQL named them.
            FOR name IN SELECT conname FROM pg_constraint WHERE conrelid = 'messages'::regclass AND contype = 'c'
                AND (pg_get_constraintdef(oid) LIKE '%fanningOut%' OR pg_get_constraintdef(oid) LIKE '%endpoint_id%')
            LOOP
                EXECUTE format('ALTER TABLE messages DROP CONSTRAINT %I', name);
            END LOOP;
        END $$;
        ALTER TABLE messages ADD CONSTRAINT messages_state_check CHECK (state IN (\(states))),
            ADD CONSTRAINT messages_target_check CHECK (num_nonnulls(topic, endpoint_id, user_id) = 1);
        \(indexes)
        """
}
