/// A value bound to a statement parameter. Only the types the schema uses.
enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case null
    /// A PostgreSQL `text[]` (bulk loading); SQLite has no arrays and refuses it.
    case textArray([String])
    /// A SQLite blob (the token keys an import binds); the PostgreSQL store binds none and refuses it.
    case blob([UInt8])

    /// A text value, or NULL for `nil`.
    static func text(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    /// An integer value.
    static func int(_ value: Int) -> SQLValue { .integer(Int64(value)) }
    /// 1 or 0: the schema stores booleans as integers in both engines.
    static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
}
