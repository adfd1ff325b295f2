import CSQLite

/// The one place SQLite result codes become `StoreError`s.
enum SQLiteResult {
    /// The error for a failed call, with SQLite's own message and the extended code in the text.
    /// `connection` (may be nil before open succeeds) supplies `sqlite3_errmsg`.
    static func error(_ code: Int32, connection: OpaquePointer?, doing what: String) -> StoreError {
        let detail: String
        if let connection, let text = sqlite3_errmsg(connection) {
            detail = String(cString: text)
        } else {
            detail = String(cString: sqlite3_errstr(code))
        }
        return StoreError(storeCode(for: code), message: "\(what): \(detail) (SQLite \(code))")
    }

    /// Groups primary result codes (the low byte of an extended code) by what a caller can do.
    static func storeCode(for code: Int32) -> StoreError.Code {
        switch code & 0xFF {
        case SQLITE_CONSTRAINT:
            // Uniqueness the store cares about is checked explicitly first, so a constraint firing
            // here is a race or a caller error: a conflict with stored state.
            return .conflict
        case SQLITE_TOOBIG, SQLITE_RANGE, SQLITE_MISMATCH:
            return .invalidArgument
        case SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_READONLY, SQLITE_PERM,
            SQLITE_BUSY, SQLITE_LOCKED, SQLITE_PROTOCOL, SQLITE_NOLFS, SQLITE_AUTH:
            // The file or the disk, not the request: another process holding the lock, no space, damage.
            return .io
        default:
            return .internal
        }
    }
}
