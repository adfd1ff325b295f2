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

    var sql: String { conditions.joined(separator: " AND ") }
}
