import CSQLite
import PushTestSupport
import Testing

@testable import PushStore

@Suite("SQLite layer")
struct SQLiteLayerTests {
    @Test("a statement is prepared once per SQL text and reused")
    func statementCache() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        let first = try database.statement("SELECT 1")
        #expect(try database.statement("SELECT 1") === first)
        #expect(try database.statement("SELECT 2") !== first)
        #expect(try database.row("SELECT 1") { $0.int64(0) } == 1)
        #expect(try database.row("SELECT 1") { $0.int64(0) } == 1)
    }

    @Test("SQLite keeps no memory statistics (their global mutex on every allocation): none counted after queries")
    func noMemoryStatistics() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        try database.execute("CREATE TABLE t (x TEXT); INSERT INTO t VALUES (zeroblob(100000))")
        #expect(try database.row("SELECT length(x) FROM t") { $0.int64(0) } == 100_000)
        #expect(sqlite3_memory_used() == 0)
    }

    @Test("text round-trips exactly: empty is not NULL, unicode and embedded NUL survive, small and large strings")
    func textBinding() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        // Small strings (up to 15 UTF-8 bytes) live inline, larger ones in storage: both bound from their own bytes.
        let large = String(repeating: "token-é-", count: 40)
        for value in ["", "é✓ 🚀", "a\u{0}b", large, String(large.dropFirst(3)), "a\u{0}" + large] {
            let read = try database.row(
                "SELECT ?, ? IS NULL, length(CAST(? AS BLOB))", [.text(value), .text(value), .text(value)]
            ) {
                (text: $0.text(0), isNull: $0.bool(1), bytes: $0.int64(2))
            }
            #expect(read?.text == value)
            #expect(read?.isNull == false)
            #expect(read?.bytes == Int64(value.utf8.count))
        }
        #expect(try database.row("SELECT ?", [.text(nil)]) { $0.optionalText(0) } == .some(nil))
    }

    @Test("SQL errors become StoreErrors with SQLite's message; constraint failures are conflicts")
    func errors() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        let syntax = #expect(throws: StoreError.self) { try database.run("SELEC 1") }
        #expect(syntax?.code == .internal)
        #expect(syntax?.message.contains("syntax error") == true)
        try database.execute("CREATE TABLE u (x TEXT UNIQUE)")
        try database.run("INSERT INTO u VALUES (?)", [.text("a")])
        let duplicate = #expect(throws: StoreError.self) { try database.run("INSERT INTO u VALUES (?)", [.text("a")]) }
        #expect(duplicate?.code == .conflict)
        // The statement is usable again after a failure.
        try database.run("INSERT INTO u VALUES (?)", [.text("b")])
        #expect(try database.rows("SELECT x FROM u ORDER BY x") { $0.text(0) } == ["a", "b"])
    }

    @Test("a transaction commits on return and rolls back on throw")
    func transactions() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        try database.execute("CREATE TABLE t (x INTEGER)")
        try database.transaction { () throws(StoreError) in try database.run("INSERT INTO t VALUES (1)") }
        #expect(throws: StoreError.self) {
            try database.transaction { () throws(StoreError) in
                try database.run("INSERT INTO t VALUES (2)")
                throw StoreError(.conflict, message: "stop")
            }
        }
        #expect(try database.rows("SELECT x FROM t") { $0.int64(0) } == [1])
    }
}
