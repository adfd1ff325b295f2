import Glibc
import PushTestSupport
import Testing

@testable import PushStore

@Suite("Schema migrations")
struct MigrationTests {
    @Test("a fresh file gets the current version; reopening applies nothing")
    func freshAndReopen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let current = try #require(Schema.migrations.last?.version)

        let store = try await SQLiteStore.open(path: directory.databasePath)
        _ = try await store.createTopic(name: "kept")
        await store.close()

        let database = try Database(path: directory.databasePath)
        #expect(try Migrator.userVersion(database) == current)
        #expect(try Migrator.migrate(database) == [])
        #expect(try database.row("PRAGMA journal_mode") { $0.text(0) } == "wal")

        let reopened = try await SQLiteStore.open(path: directory.databasePath)
        #expect(try await reopened.topicExists(name: "kept"))
        await reopened.close()
    }

    @Test("a new file gets 16 KiB pages; an existing file keeps its own")
    func pageSizes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        await store.close()
        #expect(try Database(path: directory.databasePath).row("PRAGMA page_size") { $0.int64(0) } == 16384)

        let older = directory.path + "/older.sqlite"
        do {
            let database = try Database(path: older)
            try database.execute("PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; CREATE TABLE kept (x INTEGER)")
        }
        let reopened = try await SQLiteStore.open(path: older)
        _ = try await reopened.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
        await reopened.close()
        let database = try Database(path: older)
        #expect(try database.row("PRAGMA page_size") { $0.int64(0) } == 4096)
        #expect(try database.row("PRAGMA integrity_check") { $0.text(0) } == "ok")
    }

    @Test("only steps newer than the file run, each once, in order")
    func stepsRunOnce() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        let steps = [
            Migration(version: 1, name: "one", sql: "CREATE TABLE a (x INTEGER)"),
            Migration(version: 2, name: "two", sql: "INSERT INTO a VALUES (2)"),
        ]
        #expect(try Migrator.migrate(database, steps: steps) == [1, 2])
        #expect(try Migrator.migrate(database, steps: steps) == [])
        let three = steps + [Migration(version: 3, name: "three", sql: "INSERT INTO a VALUES (3)")]
        #expect(try Migrator.migrate(database, steps: three) == [3])
        #expect(try database.rows("SELECT x FROM a ORDER BY x") { $0.int64(0) } == [2, 3])
        #expect(try Migrator.userVersion(database) == 3)
    }

    @Test("a failing step rolls back entirely and leaves the version where it was")
    func failingStep() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        let steps = [
            Migration(version: 1, name: "one", sql: "CREATE TABLE a (x INTEGER)"),
            Migration(version: 2, name: "broken", sql: "INSERT INTO a VALUES (1); INSERT INTO nope VALUES (1)"),
        ]
        let error = #expect(throws: StoreError.self) { try Migrator.migrate(database, steps: steps) }
        #expect(error?.message.hasPrefix("migration 2 (broken) failed") == true)
        #expect(try Migrator.userVersion(database) == 1)
        #expect(try database.rows("SELECT x FROM a") { $0.int64(0) }.isEmpty)
    }

    @Test("a version-1 file mid-fan-out resumes at its page cursor once it has chunks, its counts kept")
    func fromPageCursors() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let database = try Database(path: directory.databasePath)
            #expect(try Migrator.migrate(database, steps: Array(Schema.migrations.prefix(1))) == [1])
            try database.execute(
                """
                INSERT INTO topics (seq, name) VALUES (1, 'news');
                INSERT INTO endpoints (seq, id, app, token, enabled, custom_user_data, created_at, disabled_reason)
                VALUES (1, 'e1', 'ios', 'a', 1, '', 0, ''), (2, 'e2', 'ios', 'b', 1, '', 0, ''),
                       (3, 'e3', 'ios', 'c', 1, '', 0, '');
                INSERT INTO subscriptions (seq, id, topic_seq, endpoint_seq, filter_policy_json)
                VALUES (1, 's1', 1, 1, ''), (2, 's2', 1, 2, ''), (3, 's3', 1, 3, '');
                INSERT INTO messages (id, topic, message, message_structure, published_at, state,
                                      total, delivered, rejected, failed, skipped, cursor)
                VALUES ('old', 'news', 'hi', '', 1, 'fanningOut', 2, 2, 0, 0, 0, 'fo.2');
                """)
        }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        let policy = FanOutLeasePolicy(owner: "new", leaseMillis: 1000, chunkSize: 10)
        let chunk = try #require(try await store.claimFanOutChunk(policy, now: 1))
        #expect(chunk.message.id == "old" && chunk.cursor == "fo.2" && chunk.end == nil)
        let rest = try await store.fanOutPage(topic: "news", after: chunk.cursor, through: chunk.end, limit: 10)
        #expect(rest.items.map(\.endpoint.token) == ["c"])
        try await store.recordChunkProgress(
            chunk, policy: policy, cursor: rest.items[0].cursor,
            counts: ProgressCounts(total: 1, delivered: 1), state: .completed, now: 2)
        let message = try await store.message(id: "old")
        #expect(message.state == .completed && message.total == 3 && message.delivered == 3)
        await store.close()
    }

    @Test("step 7 rebuilds messages on a version-6 file without losing a row, attribute, chunk or hold")
    func rebuildKeepsRows() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let database = try Database(path: directory.databasePath)
            try database.execute("PRAGMA foreign_keys = ON")
            #expect(try Migrator.migrate(database, steps: Array(Schema.migrations.prefix(6))) == [1, 2, 3, 4, 5, 6])
            try database.execute(MigrationFixtures.version6Rows)
        }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        try await MigrationFixtures.expectVersion6Rows(in: store)
        await store.close()
        let database = try Database(path: directory.databasePath)
        #expect(try database.row("PRAGMA foreign_keys") { $0.int64(0) } == 0)  // per connection: a new one
        #expect(try database.rows("PRAGMA foreign_key_check") { $0.text(0) }.isEmpty)
        #expect(try database.row("PRAGMA integrity_check") { $0.text(0) } == "ok")
    }

    @Test("a file from a newer version is refused with a clear error")
    func newerFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let database = try Database(path: directory.databasePath)
            try database.execute("PRAGMA user_version = 99")
        }
        let error = await storeError { () async throws(StoreError) in
            try await SQLiteStore.open(path: directory.databasePath)
        }
        #expect(error?.code == .incompatible)
        let known = try #require(Schema.migrations.last?.version)
        #expect(error?.message.contains("schema version 99, newer than this build's \(known)") == true)
    }

    @Test("a file that is not a database, or a missing directory, is an io error")
    func badFiles() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let missing = await storeError { () async throws(StoreError) in
            try await SQLiteStore.open(path: directory.path + "/no/such/dir/store.sqlite")
        }
        #expect(missing?.code == .io)
        let file = fopen(directory.databasePath, "w")
        fputs(String(repeating: "not a database ", count: 100), file)
        fclose(file)
        let garbage = await storeError { () async throws(StoreError) in
            try await SQLiteStore.open(path: directory.databasePath)
        }
        #expect(garbage?.code == .io)
    }
}
