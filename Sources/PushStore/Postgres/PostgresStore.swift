import Dispatch
import PushSync

/// The `Store` on PostgreSQL, for several Pushgate instances sharing one database (`store:
/// "postgres://…"`). Same queries and semantics as ``SQLiteStore``.
///
/// libpq's calls block, so the store keeps a small pool of connections, each owned by its own serial
/// dispatch queue (a dedicated thread while it works): callers are Swift tasks that suspend until
/// their job is done, and the event loops and the cooperative pool never wait on the network. A job
/// (one `Store` call, one transaction) runs on the queue of the connection that has the fewest jobs.
///
/// Durability: a call returns after PostgreSQL's COMMIT, which (with the default
/// `synchronous_commit = on`) has flushed the WAL; Publish answers only after `insertMessage`.
public final class PostgresStore: SQLStore {
    static var engine: SQLEngine { .postgres }

    private final class Slot: Sendable {
        let queue: DispatchQueue
        /// The connection; `nil` once closed. Only jobs on `queue` take the lock, so it is never
        /// contended: it is here so the compiler can check that the connection is shared safely.
        let connection = Locked<PostgresConnection?>(nil)

        init(label: String) { queue = DispatchQueue(label: label) }
    }

    private let slots: [Slot]
    /// Jobs queued or running per slot, to pick the least busy.
    private let load: Locked<[Int]>
    /// The URL without its password, for logs and errors.
    public let displayURL: String
    public let health = StoreHealth()

    private init(slots: [Slot], displayURL: String) {
        self.slots = slots
        self.load = Locked(Array(repeating: 0, count: slots.count))
        self.displayURL = displayURL
    }

    /// Connects `connections` times to `url` (a libpq connection URI, `postgres://user@host:port/db`)
    /// and brings the schema up to date. Throws `io` if the server cannot be reached, `incompatible`
    /// for a database written by a newer Pushgate. `owner` false: a tool beside the gateways
    /// (import, export, the loaders), which sets up a new database but refuses to upgrade one the
    /// gateways may be running on, as on SQLite.
    public static func open(url: String, connections: Int = 4, owner: Bool = true) async throws(StoreError)
        -> PostgresStore
    {
        let display = redactedURL(url)
        let count = max(1, connections)
        let slots = (0..<count).map { Slot(label: "pushgate.store.pg\($0)") }
        let store = PostgresStore(slots: slots, displayURL: display)
        do {
            for index in slots.indices {
                try await store.onQueue(index) { () throws(StoreError) in
                    try slots[index].connection.withLock { (slot: inout PostgresConnection?) throws(StoreError) in
                        let connection = try PostgresConnection(url: url, displayURL: display)
                        if index == 0 { try PostgresSchema.migrate(connection, upgradingExisting: owner) }
                        slot = connection
                    }
                }
            }
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    public func settleBulkLoad() async throws(StoreError) {
        // VACUUM runs outside a transaction; withDatabase opens none.
        try await withDatabase { connection throws(StoreError) in
            try connection.execute("VACUUM (ANALYZE) endpoints, topics, subscriptions")
        }
    }

    public func close() async {
        for index in slots.indices {
            _ = try? await onQueue(index) { () throws(StoreError) in
                self.slots[index].connection.withLock { $0 = nil }
            }
        }
    }

    /// `postgres://user:secret@host/db?password=secret` → `postgres://user:…@host/db?password=…`
    /// (passwords never reach logs, wherever libpq lets the URL carry them).
    public static func redactedURL(_ url: String) -> String {
        let (base, query) = url.firstIndex(of: "?").map { (String(url[..<$0]), String(url[$0...])) } ?? (url, "")
        return redactedAuthority(base) + redactedQuery(query)
    }

    private static func redactedAuthority(_ url: String) -> String {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        // "postgres:", "", "user:secret@host:port", "db"
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty,
            let at = parts[2].lastIndex(of: "@"), let colon = parts[2][..<at].firstIndex(of: ":")
        else { return url }
        let authority = String(parts[2][..<colon]) + ":…" + String(parts[2][at...])
        return ([String(parts[0]), "", authority] + parts.dropFirst(3).map(String.init)).joined(separator: "/")
    }

    /// `?sslmode=require&password=secret` → `?sslmode=require&password=…`.
    private static func redactedQuery(_ query: String) -> String {
        guard !query.isEmpty else { return query }
        let pairs = query.dropFirst().split(separator: "&", omittingEmptySubsequences: false).map { pair in
            pair.lowercased().hasPrefix("password=") ? "password=…" : String(pair)
        }
        return "?" + pairs.joined(separator: "&")
    }

    /// Whether `store` names a PostgreSQL database rather than an SQLite file.
    public static func isPostgresURL(_ store: String) -> Bool {
        store.hasPrefix("postgres://") || store.hasPrefix("postgresql://")
    }

    // MARK: Running jobs

    func withDatabase<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws(StoreError) -> T)
        async throws(StoreError) -> T
    {
        let index = load.withLock { load -> Int in
            let index = load.indices.min { load[$0] < load[$1] } ?? 0
            load[index] += 1
            return index
        }
        defer { load.withLock { $0[index] -= 1 } }
        return try await recorded { () async throws(StoreError) -> T in
            try await onQueue(index) { () throws(StoreError) -> T in
                try self.slots[index].connection.withLock {
                    (connection: inout PostgresConnection?) throws(StoreError) -> T in
                    guard let connection else { throw StoreError(.internal, message: "the store is closed") }
                    try connection.ensureConnected()
                    return try body(connection)
                }
            }
        }
    }

    /// Runs `body` on slot `index`'s queue and suspends the calling task until it is done.
    private func onQueue<T: Sendable>(_ index: Int, _ body: @escaping @Sendable () throws(StoreError) -> T)
        async throws(StoreError) -> T
    {
        let result: Result<T, StoreError> = await withCheckedContinuation { continuation in
            slots[index].queue.async {
                continuation.resume(returning: Result { () throws(StoreError) -> T in try body() })
            }
        }
        return try result.get()
    }
}
