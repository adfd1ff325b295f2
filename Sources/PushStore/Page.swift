/// One page of a listing, in a stable order (creation order for the SQLite engine).
public struct Page<Item: Sendable & Equatable>: Sendable, Equatable {
    /// The items on this page; never more than the requested limit.
    public var items: [Item]
    /// Where the next page starts; `nil` on the last page. Opaque: pass it back unchanged.
    /// A cursor stays valid when records are added or deleted (paging resumes after the position).
    public var nextCursor: String?

    /// Makes a page.
    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}
