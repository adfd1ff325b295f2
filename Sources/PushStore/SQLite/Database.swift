import CSQLite

/// One SQLite connection and its cache of prepared statements. Not thread-safe: `SQLiteStore` uses
/// it from one serial queue only.
final class Database: SQLDatabase {
    var engine: SQLEngine { .sqlite }
    private let connection: OpaquePointer
    /// Prepared once per SQL text and reused; finalized before the connection closes.
    private var statements: [String: Statement] = [:]
    /// The path the connection was opened with, for error messages.
    let path: String

    /// SQLite's memory statistics (`sqlite3_memory_used`, the soft heap limit) are not used, and
    /// keeping them takes a process-wide mutex on every allocation: ~2.5 % of an import's store
    /// thread in `perf`. Set once, before the first connection.
    private static let memoryStatisticsOff: Int32 = CSQLite_disableMemoryStatistics()

    /// Opens (creating if needed) the file at `path`. Directories are not created.
    init(path: String) throws(StoreError) {
        _ = Self.memoryStatisticsOff
        var connection: OpaquePointer?
        // NOMUTEX: the store's queue already serializes every use; EXRESCODE: extended codes in errors.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &connection, flags, nil)
        guard rc == SQLITE_OK, let connection else {
            let error = SQLiteResult.error(rc, connection: connection, doing: "opening \(path)")
            // A handle is returned even on failure and must still be closed.
            sqlite3_close_v2(connection)
            throw error
        }
        // The token index's key (schema 9); every connection that may write endpoints needs it.
        let registered = TokenKey.register(on: connection)
        guard registered == SQLITE_OK else {
            let error = SQLiteResult.error(
                registered, connection: connection, doing: "registering \(TokenKey.sqlFunction)")
            sqlite3_close_v2(connection)
            throw error
        }
        self.connection = connection
        self.path = path
    }

    deinit {
        statements.removeAll()  // finalize first: close_v2 would otherwise defer the close.
        // close_v2 fails only for a handle that is not a connection; a deinit has no one to tell.
        sqlite3_close_v2(connection)
    }

    // MARK: Running SQL

    /// Runs SQL text that may hold several statements and returns no rows (DDL, pragmas, BEGIN).
    func execute(_ sql: String) throws(StoreError) {
        let rc = sqlite3_exec(connection, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteResult.error(rc, connection: connection, doing: "running \(sql)") }
    }

    /// The cached prepared statement for `sql`, preparing it on first use.
    func statement(_ sql: String) throws(StoreError) -> Statement {
        if let cached = statements[sql] { return cached }
        let statement = try Statement(connection: connection, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs a statement that returns no rows; answers how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue] = []) throws(StoreError) -> Int {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { statement.reset() }
        while try statement.step() {}
        return Int(sqlite3_changes64(connection))
    }

    /// Runs a query and maps every row (`capacity`: the rows expected, reserved up front).
    func rows<T>(
        _ sql: String, _ values: [SQLValue] = [], capacity: Int = 0, _ map: (Statement) throws(StoreError) -> T
    ) throws(StoreError) -> [T] {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { statement.reset() }
        var result: [T] = []
        result.reserveCapacity(capacity)
        while try statement.step() { result.append(try map(statement)) }
        return result
    }

    /// Runs a query and maps its first row, or answers `nil` when there is none.
    func row<T>(_ sql: String, _ values: [SQLValue] = [], _ map: (Statement) throws(StoreError) -> T)
        throws(StoreError) -> T?
    {
        let statement = try statement(sql)
        try statement.bind(values)
        defer { statement.reset() }
        return try statement.step() ? try map(statement) : nil
    }

    // MARK: Transactions

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    /// IMMEDIATE takes the write lock up front, so a read-then-write body never fails to upgrade.
    /// Not reentrant: queries called from `body` must not open their own transaction.
    @discardableResult
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try execute("BEGIN IMMEDIATE")
        let result: T
        do {
            result = try body()
        } catch {
            rollback()
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            rollback()
            throw error
        }
        return result
    }

    /// Rolls back after a failure. SQLite may already have rolled back by itself (e.g. after a full
    /// disk), in which case there is no transaction and nothing to do; the first error is the one
    /// reported either way.
    private func rollback() {
        if sqlite3_get_autocommit(connection) == 0 {
            _ = try? execute("ROLLBACK")
        }
    }
}
