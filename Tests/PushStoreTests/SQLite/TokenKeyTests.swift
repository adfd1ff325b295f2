import PushTestSupport
import Testing

@testable import PushStore

@Suite("SQLite token keys (schema 9)")
struct TokenKeyTests {
    @Test("the key is SHA-256 of app, a 0 byte and the token, cut to 16 bytes, in Swift and in SQL")
    func knownKey() throws {
        // python3 -c "import hashlib; print(list(hashlib.sha256(b'ios\x00abc').digest()[:16]))"
        let expected: [UInt8] = [110, 196, 137, 189, 53, 10, 12, 206, 143, 177, 250, 137, 13, 152, 102, 36]
        #expect(TokenKey.make(app: "ios", token: "abc") == expected)
        // The 0 byte keeps (app, token) pairs apart that concatenate alike.
        #expect(TokenKey.make(app: "io", token: "sabc") != expected)
        #expect(TokenKey.make(app: "", token: "").count == 16)

        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        let hex = try database.row("SELECT hex(pushgate_token_key('ios', 'abc'))") { $0.text(0) }
        #expect(hex == Self.hex(expected))
        #expect(try database.row("SELECT pushgate_token_key(NULL, 'abc') IS NULL") { $0.int64(0) } == 1)
        #expect(try database.row("SELECT pushgate_token_key('ios', NULL) IS NULL") { $0.int64(0) } == 1)
    }

    /// SQLite's `hex()`: two uppercase digits a byte.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + digits : digits
        }.joined()
    }

    @Test("a token's lookup searches the key's unique index, not the app's")
    func lookupPlan() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        await store.close()
        let database = try Database(path: directory.databasePath)
        let plan = try database.rows(
            "EXPLAIN QUERY PLAN SELECT \(Columns.endpoint) FROM endpoints e WHERE \(SQLEngine.sqlite.tokenMatch)",
            [.text("ios"), .text("abc")]
        ) { $0.text(3) }
        #expect(plan.contains { $0.contains("USING INDEX endpoints_token_key (token_key=?)") }, "\(plan)")
    }

    @Test("step 9 keys a version-8 file's endpoints: their tokens are found, and taken, after it")
    func migratesExisting() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let database = try Database(path: directory.databasePath)
            #expect(try Migrator.migrate(database, steps: Array(Schema.migrations.prefix(8))).count == 8)
            try database.execute(
                """
                INSERT INTO endpoints (seq, id, app, token, enabled, custom_user_data, created_at, disabled_reason)
                VALUES (1, 'e1', 'ios', 'aa', 1, '', 0, ''), (2, 'e2', 'ios', 'bb', 1, '', 0, ''),
                       (3, 'e3', 'android', 'aa', 1, '', 0, '');
                """)
        }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        let again = try await store.createEndpoint(app: "ios", normalizedToken: "bb", customUserData: "", now: 1)
        #expect(again.endpoint.id == "e2" && !again.created)
        let other = try await store.createEndpoint(app: "android", normalizedToken: "aa", customUserData: "", now: 1)
        #expect(other.endpoint.id == "e3" && !other.created)
        let new = try await store.createEndpoint(app: "android", normalizedToken: "bb", customUserData: "", now: 1)
        #expect(new.created)
        await store.close()

        let database = try Database(path: directory.databasePath)
        let keys = try database.rows("SELECT app, token, hex(token_key) FROM endpoints ORDER BY seq") {
            ($0.text(0), $0.text(1), $0.text(2))
        }
        #expect(keys.count == 4)
        for (app, token, key) in keys {
            #expect(key == Self.hex(TokenKey.make(app: app, token: token)), "\(app) \(token)")
        }
        #expect(try database.row("PRAGMA integrity_check") { $0.text(0) } == "ok")
    }

    @Test("a changed token moves the endpoint's key: found by the new token, the old one free")
    func updateMovesKey() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        let first = try await store.createEndpoint(app: "ios", normalizedToken: "old", customUserData: "", now: 1)
        _ = try await store.updateEndpoint(
            id: first.endpoint.id, normalizedToken: "new", enabled: nil, customUserData: nil)
        let byNew = try await store.createEndpoint(app: "ios", normalizedToken: "new", customUserData: "", now: 2)
        #expect(byNew.endpoint.id == first.endpoint.id && !byNew.created)
        let byOld = try await store.createEndpoint(app: "ios", normalizedToken: "old", customUserData: "", now: 3)
        #expect(byOld.created && byOld.endpoint.id != first.endpoint.id)
        // Data left alone: the key too.
        _ = try await store.updateEndpoint(
            id: first.endpoint.id, normalizedToken: nil, enabled: false, customUserData: "x")
        #expect(
            try await store.createEndpoint(app: "ios", normalizedToken: "new", customUserData: "x", now: 4).created
                == false)
        await store.close()
    }

    @Test("an import leaves the connection's foreign keys on: deleting an endpoint still takes its subscriptions")
    func importKeepsForeignKeys() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        let rows = (0..<150).map { EndpointImport(app: "ios", token: "t\($0)", topics: ["news"]) }
        #expect(try await store.importEndpoints(rows, now: 1).created == 150)
        // The same rows again: every one found by its key, nothing new.
        #expect(try await store.importEndpoints(rows, now: 2) == ImportCounts(existing: 150))
        let page = try await store.listSubscriptions(topic: "news", endpointID: nil, cursor: nil, limit: 1)
        let endpointID = try #require(page.items.first?.endpointID)
        try await store.deleteEndpoint(id: endpointID)
        let left = try await store.listSubscriptions(topic: "news", endpointID: endpointID, cursor: nil, limit: 10)
        #expect(left.items.isEmpty)
        let foreignKeys = try await store.withDatabase { database throws(StoreError) in
            try database.row("PRAGMA foreign_keys") { $0.int64(0) }
        }
        #expect(foreignKeys == 1)
        await store.close()
    }

    @Test("listing by app and token finds the one endpoint, and only in its app")
    func listByToken() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        let ios = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
        _ = try await store.createEndpoint(app: "android", normalizedToken: "aa", customUserData: "", now: 1)
        _ = try await store.createEndpoint(app: "ios", normalizedToken: "bb", customUserData: "", now: 1)
        let found = try await store.listEndpoints(
            app: "ios", userID: nil, token: "aa", apps: nil, cursor: nil, limit: 10)
        #expect(found.items.map(\.id) == [ios.endpoint.id])
        let none = try await store.listEndpoints(
            app: "ios", userID: nil, token: "cc", apps: nil, cursor: nil, limit: 10)
        #expect(none.items.isEmpty)
        await store.close()
    }

    @Test("a key left stale by a hand-made change is named, for a create and for an import")
    func staleKeyNamed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        let first = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
        _ = try await store.withDatabase { database throws(StoreError) in
            try database.run("UPDATE endpoints SET token = 'zz' WHERE id = ?", [.text(first.endpoint.id)])
        }
        let created = await storeError { () async throws(StoreError) in
            _ = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 2)
        }
        #expect(
            created?.message.contains("endpoint \(first.endpoint.id) holds the token key") == true,
            "\(String(describing: created))")
        let imported = await storeError { () async throws(StoreError) in
            _ = try await store.importEndpoints([EndpointImport(app: "ios", token: "aa")], now: 3)
        }
        #expect(
            imported?.message.contains("endpoint \(first.endpoint.id) holds the token key") == true,
            "\(String(describing: imported))")
        await store.close()
    }
}
