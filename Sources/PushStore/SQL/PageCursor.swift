/// The SQLite engine's page cursors: a listing's tag and the last rowid seen, e.g. `"ep.2n9c"`.
///
/// Rowids only grow, so "rows after this rowid" stays correct when rows are added or deleted between
/// pages. The tag makes a cursor from one listing useless for another instead of silently skipping.
struct PageCursor {
    /// Which listing a cursor belongs to.
    enum Kind: String {
        case endpoints = "ep"
        case topics = "tp"
        case subscriptions = "sb"
        case channels = "ch"
        /// Newest first: the rowid the next page starts below.
        case messages = "ms"
        /// Newest first, like messages.
        case deliveries = "dl"
        /// Fan-out positions are stored with messages, so they must survive restarts (they do:
        /// rowids are stable) but not upgrades that renumber subscriptions (none do).
        case fanOut = "fo"
    }

    /// The rowid after which the page starts (0: the beginning).
    let after: Int64

    /// Encodes the cursor that resumes after `rowid`.
    static func encode(_ kind: Kind, after rowid: Int64) -> String {
        "\(kind.rawValue).\(String(rowid, radix: 36))"
    }

    /// Decodes a cursor; `nil` and `""` mean the beginning.
    static func decode(_ text: String?, as kind: Kind) throws(StoreError) -> Int64 {
        guard let text, !text.isEmpty else { return 0 }
        let prefix = kind.rawValue + "."
        guard text.hasPrefix(prefix), let rowid = Int64(text.dropFirst(prefix.count), radix: 36), rowid > 0,
            // Canonical form only, so each position has exactly one spelling.
            encode(kind, after: rowid) == text
        else {
            throw StoreError(.invalidArgument, message: "invalid page cursor \"\(text)\"")
        }
        return rowid
    }

    /// The largest page a listing answers; bigger requests are the caller's bug, not a clamp.
    static let maxLimit = 10_000

    /// Checks a page size.
    static func check(limit: Int) throws(StoreError) {
        guard (1...maxLimit).contains(limit) else {
            throw StoreError(.invalidArgument, message: "page size must be 1...\(maxLimit), got \(limit)")
        }
    }

    /// Splits `limit + 1` fetched rows into a page: the extra row only says whether more follow, so
    /// the last page never has a cursor to an empty page.
    static func page<Item>(_ fetched: [Item], limit: Int, kind: Kind, rowid: (Item) -> Int64)
        -> (items: ArraySlice<Item>, nextCursor: String?)
    {
        guard fetched.count > limit else { return (fetched[...], nil) }
        let items = fetched.prefix(limit)
        return (items, encode(kind, after: rowid(items[items.endIndex - 1])))
    }
}
