import CLibPQ

/// Owns one `PGresult` and frees it; rows are read through ``PostgresRow``. Values arrive in text
/// format (what the queries read is integers and text).
final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) { self.handle = handle }

    deinit { PQclear(handle) }

    var status: ExecStatusType { PQresultStatus(handle) }
    var rowCount: Int32 { PQntuples(handle) }

    /// Rows changed by an INSERT/UPDATE/DELETE (`PQcmdTuples`, "" for other commands).
    var changedRows: Int { Int(String(cString: PQcmdTuples(handle))) ?? 0 }

    /// The SQLSTATE of a failed command (e.g. `23505`), or "" when there is none.
    var sqlState: String {
        guard let field = PQresultErrorField(handle, Int32(UInt8(ascii: "C"))) else { return "" }
        return String(cString: field)
    }

    /// The server's error message, without the trailing newline.
    var errorMessage: String {
        String(cString: PQresultErrorMessage(handle)).trimmingTrailingNewlines()
    }

    func isNull(row: Int32, column: Int32) -> Bool { PQgetisnull(handle, row, column) != 0 }

    func text(row: Int32, column: Int32) -> String {
        guard let value = PQgetvalue(handle, row, column) else { return "" }
        let count = Int(PQgetlength(handle, row, column))
        guard count > 0 else { return "" }
        return value.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }

    /// The column's text form as libpq holds it (no copy).
    func withBytes<Result>(row: Int32, column: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        guard let value = PQgetvalue(handle, row, column) else {
            return body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return body(UnsafeRawBufferPointer(start: value, count: Int(PQgetlength(handle, row, column))))
    }

    func int64(row: Int32, column: Int32) -> Int64 {
        guard let value = PQgetvalue(handle, row, column) else { return 0 }
        // Integers and numeric sums print as plain decimal digits; NULL reads as 0.
        return Int64(String(cString: value)) ?? 0
    }
}

/// One row of a ``PostgresResult``.
struct PostgresRow: SQLRow {
    let result: PostgresResult
    let index: Int32

    func int64(_ column: Int32) -> Int64 { result.int64(row: index, column: column) }
    func text(_ column: Int32) -> String { result.text(row: index, column: column) }
    func isNull(_ column: Int32) -> Bool { result.isNull(row: index, column: column) }
    func withBytes<Result>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        result.withBytes(row: index, column: column, body)
    }
}

/// The one place SQLSTATEs become `StoreError` codes.
enum PostgresErrorCode {
    static func storeCode(sqlState: String) -> StoreError.Code {
        switch sqlState {
        case "23505", "23503", "23514", "40001", "40P01":
            // Uniqueness and references the store cares about are checked explicitly first, so a
            // constraint firing here is a race with another instance: a conflict with stored state.
            // Serialization failures and deadlocks were already retried.
            return .conflict
        case "54000", "22021", "22P05", "22001", "22003":
            // Too large for the engine (an index row), a NUL or invalid byte, a value out of range.
            return .invalidArgument
        default:
            break
        }
        switch sqlState.prefix(2) {
        case "08", "53", "57", "58", "55", "XX", "":
            // Connection, resources (disk full), operator intervention, system, lock, internal
            // corruption; "" when the connection is gone.
            return .io
        case "22":
            return .invalidArgument
        default:
            return .internal
        }
    }

    /// Whether a transaction that failed this way may simply run again.
    static func isRetryable(sqlState: String) -> Bool { sqlState == "40001" || sqlState == "40P01" }
}

extension String {
    func trimmingTrailingNewlines() -> String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
