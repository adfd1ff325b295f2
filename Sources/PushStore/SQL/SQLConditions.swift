/// A WHERE clause built from conditions joined by AND, each with its parameters: the listings'
/// optional filters (by app, user, state, topic) added only when given. One SQL text per
/// combination of filters, so each is prepared once and cached.
struct SQLConditions {
    private var conditions: [String]
    private(set) var values: [SQLValue]

    /// Starts with a condition every row must meet (the page's position).
    init(_ condition: String, _ value: SQLValue) {
        conditions = [condition]
        values = [value]
    }

    /// Adds `condition` (with one `?`) when the filter `value` is given.
    mutating func add(_ condition: String, ifGiven value: String?) {
        guard let value else { return }
        conditions.append(condition)
        values.append(.text(value))
    }

    /// Adds a condition without parameters.
    mutating func add(_ condition: String) { conditions.append(condition) }

    /// Adds `column IN (?, …)` for `values` when given (an empty list matches nothing). The SQL text
    /// differs by the list's length: callers keep such lists short (a key's apps).
    mutating func add(_ column: String, in values: [String]?) {
        guard let values else { return }
        guard !values.isEmpty else { return add("1 = 0") }
        conditions.append("\(column) IN (\(Array(repeating: "?", count: values.count).joined(separator: ", ")))")
        self.values += values.map(SQLValue.text)
    }

    /// Adds `condition` with several parameters.
    mutating func add(_ condition: String, values: [SQLValue]) {
        conditions.append(condition)
        self.values += values
    }

    var sql: String { conditions.joined(separator: " AND ") }
}
