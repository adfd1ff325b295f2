import CLibPQ

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection and its cache of prepared statements. Not thread-safe: ``PostgresStore``
/// uses each connection from its own serial queue only. Calls block (libpq's synchronous API).
final class PostgresConnection: SQLDatabase {
    private let connection: OpaquePointer
    /// SQL text as the queries write it → the name of its prepared statement on this connection.
    private var prepared: [String: String] = [:]
    /// The URL with any password removed, for messages.
    let displayURL: String

    var engine: SQLEngine { .postgres }

    /// Connects; `io` if the server cannot be reached or refuses the login.
    init(url: String, displayURL: String) throws(StoreError) {
        self.displayURL = displayURL
        guard let connection = PQconnectdb(url) else {
            throw StoreError(.io, message: "connecting to \(displayURL): out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines()
            PQfinish(connection)
            throw StoreError(.io, message: "connecting to \(displayURL): \(message)")
        }
        self.connection = connection
        // Notices (e.g. "relation already exists, skipping") would go to stderr unformatted.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { PQfinish(connection) }

    /// Reconnects if the server closed the connection (restart, idle timeout); prepared statements
    /// are gone with it.
    func ensureConnected() throws(StoreError) {
        guard PQstatus(connection) != CONNECTION_OK else { return }
        PQreset(connection)
        prepared.removeAll()
        guard PQstatus(connection) == CONNECTION_OK else {
            throw StoreError(.io, message: "reconnecting to \(displayURL): \(lastError)")
        }
    }

    private var lastError: String { String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines() }

    // MARK: Running SQL

    /// Runs SQL text without parameters (may hold several statements; DDL, BEGIN, COMMIT).
    func execute(_ sql: String) throws(StoreError) {
        let result = try check(PQexec(connection, sql), doing: sql)
        _ = result
    }

    @discardableResult
    func run(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> Int {
        try executePrepared(sql, values).changedRows
    }

    /// `capacity` is not needed here: the result's row count is known before the rows are mapped.
    func rows<T>(_ sql: String, _ values: [SQLValue], capacity: Int, _ map: (PostgresRow) throws(StoreError) -> T)
        throws(StoreError) -> [T]
    {
        let result = try executePrepared(sql, values)
        var mapped: [T] = []
        mapped.reserveCapacity(Int(result.rowCount))
        for index in 0..<result.rowCount { mapped.append(try map(PostgresRow(result: result, index: index))) }
        return mapped
    }

    func row<T>(_ sql: String, _ values: [SQLValue], _ map: (PostgresRow) throws(StoreError) -> T)
        throws(StoreError) -> T?
    {
        let result = try executePrepared(sql, values)
        return result.rowCount > 0 ? try map(PostgresRow(result: result, index: 0)) : nil
    }

    /// Prepares `sql` once per connection (with `?` turned into `$n`), then runs it with `values`
    /// as text parameters.
    private func executePrepared(_ sql: String, _ values: [SQLValue]) throws(StoreError) -> PostgresResult {
        let name = try statementName(sql)
        var texts: [String?] = []
        texts.reserveCapacity(values.count)
        for value in values {
            switch value {
            case .integer(let n): texts.append(String(n))
            case .null: texts.append(nil)
            case .text(let s):
                guard !s.utf8.contains(0) else {
                    throw StoreError(
                        .invalidArgument, message: "text with a NUL character cannot be stored in PostgreSQL")
                }
                texts.append(s)
            case .textArray(let items): texts.append(Self.arrayLiteral(items))
            case .blob:
                throw StoreError(.internal, message: "the PostgreSQL store binds no blobs (\(sql))")
            }
        }
        let handle = Self.withCStrings(texts) { pointers in
            PQexecPrepared(connection, name, Int32(pointers.count), pointers, nil, nil, 0)
        }
        return try check(handle, doing: sql)
    }

    private func statementName(_ sql: String) throws(StoreError) -> String {
        if let name = prepared[sql] { return name }
        let name = "pg\(prepared.count + 1)"
        let result = try check(
            PQprepare(connection, name, Self.numberedParameters(sql), 0, nil), doing: "preparing \(sql)")
        _ = result
        prepared[sql] = name
        return name
    }

    /// The result if the command succeeded, else the error mapped from its SQLSTATE.
    private func check(_ handle: OpaquePointer?, doing what: String) throws(StoreError) -> PostgresResult {
        guard let handle else {
            throw StoreError(.io, message: "\(what): \(lastError)")
        }
        let result = PostgresResult(handle)
        switch result.status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            lastSQLState = ""
            return result
        default:
            lastSQLState = result.sqlState
            let message = result.errorMessage.isEmpty ? lastError : result.errorMessage
            throw StoreError(
                PostgresErrorCode.storeCode(sqlState: result.sqlState),
                message: "\(what.count > 200 ? String(what.prefix(200)) + "…" : what): \(message)"
                    + (result.sqlState.isEmpty ? "" : " (SQLSTATE \(result.sqlState))"))
        }
    }

    /// The SQLSTATE of the last failed command ("" after a success).
    private(set) var lastSQLState = ""

    // MARK: Transactions

    /// Runs `body` in one READ COMMITTED transaction; a serialization failure or deadlock (another
    /// instance's transaction in the way) runs it again, up to 5 times in all.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        var attempt = 1
        while true {
            do {
                try execute("BEGIN")
                let result = try body()
                try execute("COMMIT")
                return result
            } catch {
                let state = lastSQLState
                rollback()
                guard PostgresErrorCode.isRetryable(sqlState: state), attempt < 5 else { throw error }
                attempt += 1
            }
        }
    }

    private func rollback() {
        guard PQtransactionStatus(connection) != PQTRANS_IDLE else { return }
        if let handle = PQexec(connection, "ROLLBACK") { PQclear(handle) }
    }

    // MARK: Helpers

    /// `?` → `$1, $2, …` in order; `?N` → `$N`. The queries put no `?` inside string literals.
    static func numberedParameters(_ sql: String) -> String {
        var output = ""
        output.reserveCapacity(sql.utf8.count + 16)
        var next = 1
        var characters = sql.makeIterator()
        var pending: Character? = characters.next()
        while let character = pending {
            pending = characters.next()
            guard character == "?" else {
                output.append(character)
                continue
            }
            var digits = ""
            while let digit = pending, digit.isASCII, digit.isNumber {
                digits.append(digit)
                pending = characters.next()
            }
            if digits.isEmpty {
                output += "$\(next)"
                next += 1
            } else {
                output += "$" + digits
            }
        }
        return output
    }

    /// A `text[]` literal: every element double-quoted, `"` and `\` escaped. Byte by byte: a quote
    /// followed by a combining mark is one `Character` that is not `"`, and went unescaped.
    static func arrayLiteral(_ items: [String]) -> String {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(items.reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, item) in items.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            literal.append(UInt8(ascii: "\""))
            for byte in item.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
                literal.append(byte)
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }

    /// Calls `body` with C strings for `texts` (NULL for nil) that live for the call.
    private static func withCStrings<R>(_ texts: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let copies: [UnsafeMutablePointer<CChar>?] = texts.map { text in text.flatMap { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }
}
