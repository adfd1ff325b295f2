import Dispatch
import PushSync

/// The `Store` on an embedded SQLite file (WAL journal).
///
/// Every call runs on one dedicated serial dispatch queue that owns the connection: callers are
/// Swift tasks that suspend until their job is done, so the blocking SQLite calls (and the fsyncs of
/// each commit) never occupy the cooperative pool. One queue means one writer, which SQLite wants
/// anyway; reads share the queue too — simplest, and every call is a few indexed lookups. (WAL would
/// let a second read-only connection run beside the writer if reads ever need to.)
///
/// Durability: `synchronous=FULL` fsyncs the WAL on every commit, so a call that returned survives
/// power loss; Publish answers only after `insertMessage` returns. `NORMAL` would be faster but could
/// lose the last commits on power loss (not on a process crash).
public final class SQLiteStore: SQLStore {
    static var engine: SQLEngine { .sqlite }

    /// The serial queue every job runs on.
    private let queue: DispatchQueue
    /// The connection; `nil` once closed. Only jobs on `queue` take the lock, so it is never contended:
    /// it is here so the compiler can check that the connection is shared safely.
    private let connection = Locked<Database?>(nil)
    public let health = StoreHealth()
    /// Notices the database file being deleted or replaced under the running store.
    private let file = Locked<SQLiteFileWatch?>(nil)

    private init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Opens the store at `path`, creating the file (not its directory) if needed, and brings its
    /// schema up to date. Throws `incompatible` for a file written by a newer Pushgate, `io` if the
    /// file cannot be opened or is not a database. `owner` false: a tool beside the gateway (import,
    /// export, the loaders), which must leave the running gateway's leases alone. `cacheMiB`: the
    /// connection's page cache (SQLite's default is 2 MiB); a bulk load touches index pages all over
    /// the file (random ids and tokens), and with a small cache each batch spills and re-reads them.
    public static func open(path: String, owner: Bool = true, cacheMiB: Int = 0) async throws(StoreError)
        -> SQLiteStore
    {
        let store = SQLiteStore(label: "pushgate.store \(path)")
        try await store.onQueue { () throws(StoreError) in
            try store.connection.withLock { (slot: inout Database?) throws(StoreError) in
                let database = try Database(path: path)
                try configure(database)
                if !owner { try refuseOlderSchema(database) }
                if cacheMiB > 0 { try database.execute("PRAGMA cache_size = -\(cacheMiB * 1024)") }
                try Migrator.migrate(database)
                // One process owns the file: no lease from a previous run can still be held, so its
                // unfinished fan-out chunks and its webhooks' batches are claimable at once.
                if owner {
                    try database.releaseAllFanOutLeases()
                    try database.releaseAllWebhookLeases()
                }
                slot = database
            }
            store.file.withLock { $0 = SQLiteFileWatch(path: path) }
        }
        return store
    }

    /// A tool leaves an older schema to the gateway (``StoreError/olderSchemaForTool(_:version:known:)``).
    private static func refuseOlderSchema(_ database: Database) throws(StoreError) {
        let known = Schema.migrations.last?.version ?? 0
        if let refusal = StoreError.olderSchemaForTool(
            database.path, version: try Migrator.userVersion(database), known: known)
        {
            throw refusal
        }
    }

    /// The page size of a new file: 16 KiB rather than SQLite's 4 KiB. A row's writes are B-tree
    /// inserts (an endpoint's table row and 3-4 index entries, a subscription's row and 3), and
    /// with 4 times the entries a page each descends fewer levels and finds fewer pages in the
    /// cache, and a commit and its checkpoint write fewer pages: importing 1M endpoints went from
    /// ~97,000 to ~118,000 rows/s (8 KiB: ~111,000), same file size. A small commit writes whole
    /// pages to the WAL, so the gateway's one-row writes write more bytes (tens of KB), in as many
    /// writes and syncs.
    static let pageSize = 16384

    /// Connection settings; they are per connection, so they run on every open.
    private static func configure(_ database: Database) throws(StoreError) {
        // Wait for another process's lock rather than failing at once (e.g. a backup tool reading).
        try database.execute("PRAGMA busy_timeout = 5000")
        // A new file's pages (an existing file keeps its own; see `pageSize`). Before WAL mode, which
        // fixes the size once the file has any.
        try database.execute("PRAGMA page_size = \(pageSize)")
        let mode = try database.row("PRAGMA journal_mode = WAL") { $0.text(0) }
        guard mode == "wal" else {
            throw StoreError(.io, message: "\(database.path): cannot use WAL journal mode (got \(mode ?? "nothing"))")
        }
        try database.execute("PRAGMA synchronous = FULL")
        // Off by default in SQLite; cascading deletes of subscriptions depend on it.
        try database.execute("PRAGMA foreign_keys = ON")
    }

    /// SQLite has no hint bits or visibility map to set: a bulk load's rows read as fast as any.
    public func settleBulkLoad() async throws(StoreError) {}

    public func close() async {
        // Queued behind calls already made, so they finish first.
        _ = try? await onQueue { () throws(StoreError) in
            self.connection.withLock { $0 = nil }
            self.file.withLock { $0 = nil }
        }
    }

    // MARK: Running jobs

    /// Runs `body` with the open connection on the store's queue.
    func withDatabase<T: Sendable>(_ body: @escaping @Sendable (Database) throws(StoreError) -> T)
        async throws(StoreError) -> T
    {
        try await recorded { () async throws(StoreError) -> T in
            try await onQueue { () throws(StoreError) -> T in
                try self.connection.withLock { (database: inout Database?) throws(StoreError) -> T in
                    guard let database else { throw StoreError(.internal, message: "the store is closed") }
                    // Before the call: a write into a deleted file would be answered OK and lost.
                    try self.file.withLock { (file: inout SQLiteFileWatch?) throws(StoreError) in try file?.check() }
                    return try body(database)
                }
            }
        }
    }

    /// Runs `body` on the queue and suspends the calling task until it is done.
    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> T)
        async throws(StoreError) -> T
    {
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(StoreError) -> T in try body() })
            }
        }
        return try result.get()
    }
}
