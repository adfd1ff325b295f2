import CSQLite

/// A prepared statement, owned by the `Database` that caches it and reused for every call with the
/// same SQL text. Not thread-safe: only the store's queue touches it.
final class Statement: SQLRow {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    let sql: String

    init(connection: OpaquePointer, sql: String) throws(StoreError) {
        var handle: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard rc == SQLITE_OK, let handle else {
            throw SQLiteResult.error(rc, connection: connection, doing: "preparing \(sql)")
        }
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit {
        // The result repeats the last step's error, which was reported when it happened.
        sqlite3_finalize(handle)
    }

    /// Binds `values` to parameters 1...n, after clearing the previous use.
    func bind(_ values: [SQLValue]) throws(StoreError) {
        reset()
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .integer(let n):
                rc = sqlite3_bind_int64(handle, index, n)
            case .text(var s):
                // The string's own UTF-8 (a small string's on the stack: no copy made to bridge it);
                // the explicit length keeps any embedded NULs. TRANSIENT: SQLite copies the bytes.
                rc = s.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        // An empty string may have no storage, and a null pointer would bind NULL.
                        guard let text = chars.baseAddress else {
                            return sqlite3_bind_text64(handle, index, "", 0, CSQLite_TRANSIENT(), UInt8(SQLITE_UTF8))
                        }
                        return sqlite3_bind_text64(
                            handle, index, text, UInt64(chars.count), CSQLite_TRANSIENT(), UInt8(SQLITE_UTF8))
                    }
                }
            case .null:
                rc = sqlite3_bind_null(handle, index)
            case .blob(let bytes):
                // A zero-length blob binds as an empty blob, not NULL, only through zeroblob.
                rc = bytes.withUnsafeBytes { raw in
                    guard let base = raw.baseAddress else { return sqlite3_bind_zeroblob(handle, index, 0) }
                    return sqlite3_bind_blob64(handle, index, base, UInt64(raw.count), CSQLite_TRANSIENT())
                }
            case .textArray:
                throw StoreError(.internal, message: "SQLite has no arrays (parameter \(index) of \(sql))")
            }
            guard rc == SQLITE_OK else {
                throw SQLiteResult.error(rc, connection: connection, doing: "binding parameter \(index) of \(sql)")
            }
        }
    }

    /// Advances to the next row; `false` when the statement is done.
    func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            reset()
            throw SQLiteResult.error(rc, connection: connection, doing: "running \(sql)")
        }
    }

    /// Ends the current use so the statement holds no read snapshot or locks while cached.
    /// The return value repeats the last step's result, which `step` already checked.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns of the current row (0-based)

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func bool(_ column: Int32) -> Bool { sqlite3_column_int64(handle, column) != 0 }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// The column as text; NULL reads as `""`.
    func text(_ column: Int32) -> String {
        // Ask for the text before its length: the conversion to text may change the byte count.
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        // Empty columns (most filter policies, user ids) skip the UTF-8 check.
        guard count > 0 else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column as text, or `nil` for NULL.
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func withBytes<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        // The blob before its length, as for text.
        let bytes = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return body(UnsafeRawBufferPointer(start: count > 0 ? bytes : nil, count: count))
    }
}
