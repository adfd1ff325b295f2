/// One batch for `Store.importEndpoints`, made ready by `Store.prepareImport` on the caller's thread
/// before it goes to the store's: rows merged, new ids made, and on SQLite every endpoint insert's
/// values put together with each token's key. An import keeps the store's one thread busy while
/// the caller's reads and checks the next batch with time to spare, so what is prepared while the
/// batch before is written comes off the import's time (hashing rows, SHA-256 of tokens, ids,
/// value arrays).
public struct ImportBatch: Sendable {
    /// One row per (app, token) (``EndpointImport/merged(_:)``).
    let rows: [EndpointImport]
    /// Rows folded into an earlier one with the same token: each found its endpoint there.
    let repeated: Int
    /// The id each row's endpoint gets if it is new, in row order.
    let endpointIDs: [String]
    /// An id for each (row, topic) in row then topic order, used by the subscriptions created.
    let subscriptionIDs: [String]
    /// SQLite: the rows of each endpoint insert with its values (empty on PostgreSQL).
    let sqliteInserts: [SQLiteInsert]
    /// SQLite: each row's token key (`TokenKey`), in row order (empty on PostgreSQL).
    let sqliteKeys: [TokenKey.Digest?]
    /// The endpoints' creation time.
    let now: Int64
    /// The engine it was prepared for.
    let engine: SQLEngine

    struct SQLiteInsert: Sendable {
        let rows: Range<Int>
        let values: [SQLValue]
    }

    /// Rows per multi-row insert on SQLite: a statement's run has a fixed cost (binding, opening
    /// cursors on every index, halting). 8 parameters a row, well under SQLite's 32,766.
    static let sqliteRowsPerStatement = 100

    /// How many rows the batch was made from.
    public var count: Int { rows.count + repeated }

    init(_ given: [EndpointImport], engine: SQLEngine, now: Int64) {
        self.now = now
        self.engine = engine
        rows = EndpointImport.merged(given)
        repeated = given.count - rows.count
        endpointIDs = rows.map { _ in RandomID.make() }
        subscriptionIDs = (0..<rows.reduce(0) { $0 + $1.topics.count }).map { _ in RandomID.make() }
        guard engine == .sqlite else {
            sqliteInserts = []
            sqliteKeys = []
            return
        }
        var inserts: [SQLiteInsert] = []
        var keys: [TokenKey.Digest?] = []
        keys.reserveCapacity(rows.count)
        for group in Self.sqliteStatementGroups(rows.count) {
            var values: [SQLValue] = []
            values.reserveCapacity(group.count * 8)
            for index in group {
                let row = rows[index]
                let key = TokenKey.make(app: row.app, token: row.token)
                keys.append(key.withUnsafeBytes { TokenKey.Digest($0) })
                values += [
                    .text(endpointIDs[index]), .text(row.app), .text(row.token), .bool(row.enabled ?? true),
                    .text(row.customUserData ?? ""), .integer(now), .text(row.userID ?? ""), .blob(key),
                ]
            }
            inserts.append(SQLiteInsert(rows: group, values: values))
        }
        sqliteInserts = inserts
        sqliteKeys = keys
    }

    /// `0..<count` as SQLite statements take it: ``sqliteRowsPerStatement`` rows a statement, and a
    /// short last group a row at a time (two statement shapes in the cache, not one per size).
    static func sqliteStatementGroups(_ count: Int) -> [Range<Int>] {
        var groups: [Range<Int>] = []
        var start = 0
        while start < count {
            let end = count - start >= sqliteRowsPerStatement ? start + sqliteRowsPerStatement : start + 1
            groups.append(start..<end)
            start = end
        }
        return groups
    }
}
