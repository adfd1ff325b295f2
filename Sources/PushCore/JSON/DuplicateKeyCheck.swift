/// Finds repeated object keys: a linear scan for small objects (no allocation), a hash set once
/// an object grows, so a hostile object with many keys stays linear.
struct DuplicateKeyCheck {
    private static let linearLimit = 16
    private var seen: Set<String>?

    /// Records `key`; false if it was already present. `existing` holds the members so far.
    mutating func insert(_ key: String, existing: [(String, JSONValue)]) -> Bool {
        if seen == nil, existing.count < Self.linearLimit {
            return !existing.contains { $0.0 == key }
        }
        if seen == nil { seen = Set(existing.map(\.0)) }
        return seen!.insert(key).inserted
    }
}
