import CSQLite
import PushTLS

/// The key of an endpoint's (app, token) in SQLite's unique index `endpoints_token_key`: the first
/// 16 bytes of SHA-256 over the app's name, one 0 byte and the token (UTF-8), stored in
/// `endpoints.token_key` and computed in SQL by the function `pushgate_token_key(app, token)`,
/// which every connection of the store registers.
///
/// Why not a unique index on (app, token), as before schema 9: tokens are long (64 to ~200 bytes)
/// and arrive in no order, so an import's batch touched nearly every leaf page of a large index,
/// and each of those pages went to the WAL and back into the file at every commit: importing 1M
/// endpoints wrote ~2.5 GB for a 465 MB file. Sixteen bytes make that index a quarter of the size
/// and its comparisons `memcmp`s of 16 bytes. 128 bits of SHA-256 never collide in practice (the
/// PostgreSQL store's unique index on `md5(token)` rests on the same ground), and lookups still
/// compare the app and the token themselves.
///
/// Only Pushgate's connections know the function: the schema never names it, so the file opens in
/// any SQLite tool, but a row inserted by hand must carry its key (see docs/import.md).
enum TokenKey {
    static let byteCount = 16

    /// A key as a value: what an import's batch looks its new endpoints up by (a String of the app
    /// and the token, hashed, cost its store thread more than the key's two words do).
    struct Digest: Hashable, Sendable {
        let high: UInt64
        let low: UInt64

        /// The first 16 bytes of `bytes`; nil when there are fewer.
        init?(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count >= TokenKey.byteCount else { return nil }
            high = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            low = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        }
    }
    static let sqlFunction = "pushgate_token_key"

    /// The key of `token` in `app`.
    static func make(app: String, token: String) -> [UInt8] {
        var app = app
        var token = token
        return app.withUTF8 { app in
            token.withUTF8 { token in
                withKey(app: UnsafeRawBufferPointer(app), token: UnsafeRawBufferPointer(token)) { Array($0) }
            }
        }
    }

    /// Calls `body` with the key of `token` in `app`, made without a heap allocation (one per row of
    /// an import).
    static func withKey<Result>(
        app: UnsafeRawBufferPointer, token: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(byteCount: app.count + 1 + token.count + 32, alignment: 1) { buffer in
            let digest = UnsafeMutableRawBufferPointer(rebasing: buffer[(app.count + 1 + token.count)...])
            let input = UnsafeMutableRawBufferPointer(rebasing: buffer[..<(app.count + 1 + token.count)])
            input.copyMemory(from: app)
            input[app.count] = 0
            UnsafeMutableRawBufferPointer(rebasing: input[(app.count + 1)...]).copyMemory(from: token)
            SHA256.hash(UnsafeRawBufferPointer(input), into: digest)
            return body(UnsafeRawBufferPointer(rebasing: digest[..<byteCount]))
        }
    }

    /// Makes `pushgate_token_key(app, token)` known to `connection`: deterministic, so SQLite
    /// computes it once for a statement's bound values and may use it in an index search.
    static func register(on connection: OpaquePointer) -> Int32 {
        sqlite3_create_function_v2(
            connection, sqlFunction, 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
            tokenKeyFunction, nil, nil, nil)
    }
}

/// `pushgate_token_key(app, token)`: NULL when either is NULL, else the 16-byte key as a blob.
private func tokenKeyFunction(
    context: OpaquePointer?, count: Int32, arguments: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard count == 2, let arguments, sqlite3_value_type(arguments[0]) != SQLITE_NULL,
        sqlite3_value_type(arguments[1]) != SQLITE_NULL
    else {
        sqlite3_result_null(context)
        return
    }
    // text before bytes: the length is of the text form SQLite just made.
    let app = sqlite3_value_text(arguments[0])
    let appCount = Int(sqlite3_value_bytes(arguments[0]))
    let token = sqlite3_value_text(arguments[1])
    let tokenCount = Int(sqlite3_value_bytes(arguments[1]))
    guard let app, let token else {
        sqlite3_result_error_nomem(context)
        return
    }
    TokenKey.withKey(
        app: UnsafeRawBufferPointer(start: app, count: appCount),
        token: UnsafeRawBufferPointer(start: token, count: tokenCount)
    ) { key in
        sqlite3_result_blob(context, key.baseAddress, Int32(key.count), CSQLite_TRANSIENT())
    }
}
