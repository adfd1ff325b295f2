import Testing

@testable import PushStore

@Suite("PostgreSQL layer")
struct PostgresLayerTests {
    /// A store at `location` whose topic "news" has `count` endpoints of app "ios" (tokens tok1…).
    private static func openSubscribed(_ location: TestLocation, count: Int, now: Int64) async throws -> any Store {
        let store = try await location.open()
        _ = try await store.bulkCreateSubscribed(
            topic: "news", app: "ios", tokens: (1...count).map { "tok\($0)" }, now: now)
        return store
    }

    @Test("? parameters become $n in order; ?N keeps its number")
    func parameters() {
        #expect(PostgresConnection.numberedParameters("SELECT ? , ?") == "SELECT $1 , $2")
        #expect(
            PostgresConnection.numberedParameters("UPDATE t SET a = coalesce(?2, a) WHERE seq = ?1 AND b = ?12")
                == "UPDATE t SET a = coalesce($2, a) WHERE seq = $1 AND b = $12")
        #expect(PostgresConnection.numberedParameters("no parameters") == "no parameters")
    }

    @Test("text arrays quote every element and escape quotes and backslashes")
    func arrays() {
        #expect(PostgresConnection.arrayLiteral([]) == "{}")
        #expect(
            PostgresConnection.arrayLiteral(["a", "b c", #"q"u"#, #"back\slash"#, "NULL", ""])
                == #"{"a","b c","q\"u","back\\slash","NULL",""}"#)
        // A quote or backslash followed by a combining mark is one Character, but still escaped.
        #expect(
            PostgresConnection.arrayLiteral(["a\"\u{301}b", "x\\\u{301}"]) == "{\"a\\\"\u{301}b\",\"x\\\\\u{301}\"}")
    }

    @Test("passwords are redacted from store URLs; the scheme chooses the engine")
    func urls() {
        #expect(
            PostgresStore.redactedURL("postgres://pg:s3cret@db.example:5432/push?sslmode=require")
                == "postgres://pg:…@db.example:5432/push?sslmode=require")
        #expect(PostgresStore.redactedURL("postgresql://pg@db/push") == "postgresql://pg@db/push")
        #expect(PostgresStore.redactedURL("postgres://u:p@h/d/x") == "postgres://u:…@h/d/x")
        #expect(
            PostgresStore.redactedURL("postgres://pg@db/push?sslmode=require&Password=s3cret&x=1")
                == "postgres://pg@db/push?sslmode=require&password=…&x=1")
        #expect(PostgresStore.redactedURL("postgres://u:p@h/d?password=q") == "postgres://u:…@h/d?password=…")
        #expect(PostgresStore.isPostgresURL("postgres://h/d") && PostgresStore.isPostgresURL("postgresql://h/d"))
        #expect(!PostgresStore.isPostgresURL("./pushgate.db") && !PostgresStore.isPostgresURL("postgres.db"))
    }

    @Test("SQLSTATEs map to store codes")
    func codes() {
        #expect(PostgresErrorCode.storeCode(sqlState: "23505") == .conflict)
        #expect(PostgresErrorCode.storeCode(sqlState: "53100") == .io)  // disk full
        #expect(PostgresErrorCode.storeCode(sqlState: "08006") == .io)  // connection failure
        #expect(PostgresErrorCode.storeCode(sqlState: "57P01") == .io)  // admin shutdown
        #expect(PostgresErrorCode.storeCode(sqlState: "22P02") == .invalidArgument)
        #expect(PostgresErrorCode.storeCode(sqlState: "42601") == .internal)  // syntax
        #expect(PostgresErrorCode.isRetryable(sqlState: "40P01") && !PostgresErrorCode.isRetryable(sqlState: "23505"))
    }

    @Test("an unreachable server is an io error naming the redacted URL")
    func unreachable() async {
        let error = await storeError { () async throws(StoreError) in
            try await PostgresStore.open(url: "postgres://nobody:pw@127.0.0.1:1/none?connect_timeout=2", connections: 1)
        }
        #expect(error?.code == .io)
        #expect(error?.message.contains("postgres://nobody:…@127.0.0.1:1/none") == true)
        #expect(error?.message.contains("pw@") == false)
    }

    @Test(
        "a fresh database gets every step; reopening applies none; a newer one is refused",
        .enabled(if: StoreEngine.postgresURL != nil))
    func migrations() async throws {
        try await withLocation(.postgres) { location in
            let store = try await location.open()
            _ = try await store.createTopic(name: "kept")
            await store.close()
            let url = location.storeSetting
            let connection = try PostgresConnection(url: url, displayURL: "test")
            #expect(try PostgresSchema.version(connection) == PostgresSchema.steps.last?.version)
            #expect(try PostgresSchema.migrate(connection) == [])
            let reopened = try await location.open()
            #expect(try await reopened.topicExists(name: "kept"))
            await reopened.close()
            try connection.execute("UPDATE pushgate_schema SET version = 99")
            let error = await storeError { () async throws(StoreError) in
                try await PostgresStore.open(url: url, connections: 1)
            }
            #expect(error?.code == .incompatible)
            #expect(error?.message.contains("schema version 99") == true)
        }
    }

    @Test(
        "a bulk load is settled: its tables vacuumed and analyzed (their row counts known)",
        .enabled(if: StoreEngine.postgresURL != nil))
    func settleBulkLoad() async throws {
        try await withLocation(.postgres) { location in
            let store = try await Self.openSubscribed(location, count: 500, now: 0)
            try await store.settleBulkLoad()
            await store.close()
            let connection = try PostgresConnection(url: location.storeSetting, displayURL: "test")
            let tables = try connection.rows(
                """
                SELECT relname, reltuples::bigint FROM pg_class
                WHERE relname IN ('endpoints', 'subscriptions') AND relnamespace = current_schema()::regnamespace
                ORDER BY relname
                """, []
            ) { row in "\(row.text(0)) \(row.int64(1))" }
            // Row counts only VACUUM or ANALYZE record (-1 before). Whether pages became all-visible
            // depends on the other tests' open transactions, and the statistics views lag.
            #expect(tables == ["endpoints 500", "subscriptions 500"])
        }
    }

    @Test(
        "a claim that finds its message's row locked for a moment waits for it instead of answering nothing",
        .enabled(if: StoreEngine.postgresURL != nil))
    func claimWaitsOutALockedMessage() async throws {
        try await withLocation(.postgres) { location in
            let store = try await Self.openSubscribed(location, count: 25, now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            // Another instance's claim of the same message, or a chunk of it finishing, in its
            // transaction: SKIP LOCKED passes over the message while it lasts.
            let other = try PostgresConnection(url: location.storeSetting, displayURL: "test")
            try other.execute("BEGIN")
            _ = try other.rows("SELECT seq FROM messages WHERE id = 'm' FOR UPDATE", []) { $0.int64(0) }
            let claim = Task {
                try await store.claimFanOutChunk(
                    FanOutLeasePolicy(owner: "a", leaseMillis: 1000, chunkSize: 10), now: 5)
            }
            try await Task.sleep(for: .milliseconds(20))
            try other.execute("COMMIT")
            let chunk = try await claim.value
            #expect(chunk?.number == 0)
            #expect(chunk?.message.id == "m")
            await store.close()
        }
    }

    @Test(
        "step 7 on a version-6 database keeps every row, and its new constraints hold",
        .enabled(if: StoreEngine.postgresURL != nil))
    func version6To7() async throws {
        try await withLocation(.postgres) { location in
            let connection = try PostgresConnection(url: location.storeSetting, displayURL: "test")
            #expect(
                try PostgresSchema.migrate(connection, steps: Array(PostgresSchema.steps.prefix(6))) == [
                    1, 2, 3, 4, 5, 6,
                ])
            try connection.execute(MigrationFixtures.version6Rows)
            let store = try await location.open()
            try await MigrationFixtures.expectVersion6Rows(in: store)
            await store.close()
            let twoTargets = #expect(throws: StoreError.self) {
                try connection.run(
                    """
                    INSERT INTO messages (id, topic, user_id, message, message_structure, published_at, state, total,
                        delivered, rejected, failed, skipped, cursor) VALUES ('x', 'news', 'u', '', '', 0, 'accepted',
                        0, 0, 0, 0, 0, '')
                    """, [])
            }
            #expect(twoTargets != nil)
        }
    }

    @Test(
        "a subscription inserted without its endpoint's copies (an instance older than step 9) gets them",
        .enabled(if: StoreEngine.postgresURL != nil))
    func olderInstanceInsert() async throws {
        try await withLocation(.postgres) { location in
            let store = try await location.open()
            _ = try await store.createTopic(name: "news")
            let (endpoint, _) = try await store.createEndpoint(
                app: "ios", normalizedToken: "aa", customUserData: "", enabled: false, now: 1)
            let connection = try PostgresConnection(url: location.storeSetting, displayURL: "test")
            // What step 8's Subscribe wrote.
            try connection.run(
                """
                INSERT INTO subscriptions (id, topic_seq, endpoint_seq, filter_policy_json, filter_policy_scope)
                SELECT 's1', t.seq, e.seq, '', '' FROM topics t, endpoints e
                """, [])
            let page = try await store.fanOutPage(topic: "news", after: nil, through: nil, limit: 10).items
            #expect(page.map(\.endpoint.id) == [endpoint.id] && page.map(\.endpoint.token) == ["aa"])
            #expect(page.map(\.endpoint.app) == ["ios"] && page.map(\.endpoint.enabled) == [false])
            await store.close()
        }
    }

    @Test(
        "a tool (import, export) sets up a new database but leaves an older schema to the gateway",
        .enabled(if: StoreEngine.postgresURL != nil))
    func toolsDoNotUpgrade() async throws {
        try await withLocation(.postgres) { location in
            let url = location.storeSetting
            let connection = try PostgresConnection(url: url, displayURL: "test")
            _ = try PostgresSchema.migrate(connection, steps: Array(PostgresSchema.steps.prefix(6)))
            let refused = await storeError { () async throws(StoreError) in
                try await StoreSetting.openForTool(url)
            }
            #expect(refused?.code == .incompatible)
            #expect(refused?.message.contains("schema version 6, older than this build's") == true)
            #expect(try PostgresSchema.version(connection) == 6)
            let gateway = try await PostgresStore.open(url: url, connections: 1)
            await gateway.close()
            let tool = try await StoreSetting.openForTool(url)
            _ = try await tool.createTopic(name: "after")
            await tool.close()
            #expect(try PostgresSchema.version(connection) == PostgresSchema.steps.last?.version)
        }
    }

    @Test(
        "SQL errors carry the server's message and SQLSTATE; a failed transaction rolls back",
        .enabled(if: StoreEngine.postgresURL != nil))
    func errorsAndTransactions() async throws {
        try await withLocation(.postgres) { location in
            let connection = try PostgresConnection(url: location.storeSetting, displayURL: "test")
            let syntax = #expect(throws: StoreError.self) { try connection.run("SELEC 1", []) }
            #expect(syntax?.code == .internal)
            #expect(syntax?.message.contains("42601") == true)
            try connection.execute("CREATE TABLE u (x text UNIQUE)")
            try connection.run("INSERT INTO u VALUES (?)", [.text("a")])
            let duplicate = #expect(throws: StoreError.self) {
                try connection.run("INSERT INTO u VALUES (?)", [.text("a")])
            }
            #expect(duplicate?.code == .conflict)
            let nul = #expect(throws: StoreError.self) {
                try connection.run("INSERT INTO u VALUES (?)", [.text("a\u{0}b")])
            }
            #expect(nul?.code == .invalidArgument)
            #expect(throws: StoreError.self) {
                try connection.transaction { () throws(StoreError) in
                    try connection.run("INSERT INTO u VALUES (?)", [.text("b")])
                    throw StoreError(.conflict, message: "stop")
                }
            }
            #expect(try connection.rows("SELECT x FROM u ORDER BY x", []) { $0.text(0) } == ["a"])
            for value in ["", "é✓ 🚀"] {
                #expect(
                    try connection.row("SELECT ?::text, ?::text IS NULL", [.text(value), .text(value)]) {
                        ($0.text(0), $0.text(1))
                    }.map { $0.0 == value && $0.1 == "f" } == true)
            }
            #expect(try connection.row("SELECT ?::text", [.null]) { $0.optionalText(0) } == .some(nil))
        }
    }
}
