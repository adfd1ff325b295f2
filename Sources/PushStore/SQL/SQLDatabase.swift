/// Which database engine a connection talks to: the few places where the SQL differs ask this.
enum SQLEngine: Sendable {
    case sqlite
    case postgres
}

/// One row of a query's result, read by 0-based column index.
protocol SQLRow {
    func int64(_ column: Int32) -> Int64
    /// The column as text; NULL reads as `""`.
    func text(_ column: Int32) -> String
    func isNull(_ column: Int32) -> Bool
    /// Calls `body` with the column's value as the engine holds it, without copying it: a blob's
    /// bytes on SQLite (for keys compared as they are); PostgreSQL gives its text form.
    func withBytes<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result
}

extension SQLRow {
    /// Schema booleans are integers 0/1 in both engines.
    func bool(_ column: Int32) -> Bool { int64(column) != 0 }

    /// The column as text, or `nil` for NULL.
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
}

extension SQLDatabase {
    /// Runs a query and maps every row.
    func rows<T>(_ sql: String, _ values: [SQLValue], _ map: (Row) throws(StoreError) -> T) throws(StoreError) -> [T] {
        try rows(sql, values, capacity: 0, map)
    }
}

/// A connection the queries in `Queries/` run on: SQLite's `Database` or PostgreSQL's
/// `PostgresConnection`. SQL is written once with `?` (or `?N`) parameters; each engine adapts it
/// (PostgreSQL turns `?` into `$n`). Not thread-safe: each store uses a connection from one thread at
/// a time.
protocol SQLDatabase: AnyObject {
    associatedtype Row: SQLRow

    /// The engine, for the few statements that differ (row locks, bulk loading).
    var engine: SQLEngine { get }

    /// Runs a statement that returns no rows; answers how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> Int

    /// Runs a query and maps every row; `capacity`: the rows expected, reserved up front (a page's
    /// size spares the array's regrowth, each a copy of every row so far).
    func rows<T>(_ sql: String, _ values: [SQLValue], capacity: Int, _ map: (Row) throws(StoreError) -> T)
        throws(StoreError) -> [T]

    /// Runs a query and maps its first row, or answers `nil` when there is none.
    func row<T>(_ sql: String, _ values: [SQLValue], _ map: (Row) throws(StoreError) -> T) throws(StoreError) -> T?

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws. Writes in
    /// `body` see a consistent state: SQLite takes the write lock up front; PostgreSQL runs READ
    /// COMMITTED, so queries that read-then-write lock what they read (`SQLEngine.forUpdate`).
    /// Not reentrant.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T
}

extension SQLEngine {
    /// Appended to a SELECT that reads rows a transaction is about to change. SQLite's write lock
    /// (BEGIN IMMEDIATE) already excludes other writers; PostgreSQL locks the rows read.
    var forUpdate: String { self == .postgres ? " FOR UPDATE" : "" }

    /// Subscriptions carry copies of their endpoint's delivery columns, which the fan-out reads
    /// instead of joining `endpoints` (`SubscriptionDeliverySchema` says why PostgreSQL only).
    var subscriptionsCopyEndpoints: Bool { self == .postgres }

    /// Like `forUpdate`, but rows another transaction holds are passed over rather than waited for:
    /// how instances claim distinct fan-out chunks.
    var forUpdateSkipLocked: String { self == .postgres ? " FOR UPDATE SKIP LOCKED" : "" }

    /// `table` (with its alias) read through `index` on SQLite, where the planner without
    /// statistics would rather take another index and sort (SQLite's `INDEXED BY`); PostgreSQL
    /// plans from its statistics.
    func table(_ table: String, indexedBy index: String) -> String {
        self == .sqlite ? "\(table) INDEXED BY \(index)" : table
    }
}

extension SQLEngine {
    /// The condition that finds the endpoint of app `?1` with token `?2` in `endpoints e` through the
    /// unique index: PostgreSQL indexes (app, the token's MD5), SQLite a digest of both in a column
    /// (`TokenKey`); either way the app and token themselves are compared too.
    var tokenMatch: String {
        switch self {
        case .postgres: "e.app = ?1 AND md5(e.token) = md5(?2) AND e.token = ?2"
        case .sqlite: "e.token_key = \(TokenKey.sqlFunction)(?1, ?2) AND e.app = ?1 AND e.token = ?2"
        }
    }

    /// The conflict target of that unique index, for `INSERT … ON CONFLICT`.
    var tokenConflict: String { self == .postgres ? "(app, md5(token))" : "(token_key)" }

    /// What an insert into `endpoints` adds to its column and value lists for the token's key, given
    /// the SQL of the app and the token: SQLite stores the key, PostgreSQL's index computes its own.
    func tokenKeyInsert(app: String, token: String) -> (column: String, value: String) {
        self == .sqlite ? (", token_key", ", \(TokenKey.sqlFunction)(\(app), \(token))") : ("", "")
    }

    /// What an `UPDATE endpoints … SET` that may change the token to `token` (NULL: kept) adds to its
    /// assignments, so that SQLite's key follows the token.
    func tokenKeyUpdate(token: String) -> String {
        self == .sqlite ? "token_key = coalesce(\(TokenKey.sqlFunction)(app, \(token)), token_key), " : ""
    }
}
