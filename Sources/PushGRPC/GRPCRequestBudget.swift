import Synchronization

/// Bytes of request messages a server holds in memory before their handlers take them: the
/// message being assembled on each stream (reserved in full when its length prefix arrives, before
/// its body) and complete messages a handler has not taken yet.
///
/// One budget per connection, drawing on one budget for the whole server, so that neither one
/// client nor many can make the server buffer more than configured. A reservation that does not
/// fit is refused (the call gets RESOURCE_EXHAUSTED at once) rather than waited for: waiting
/// streams would hold their partial messages and could wedge each other.
///
/// Thread-safe: reserved on the connection's loop, released there or by a handler task.
public final class GRPCRequestBudget: Sendable {
    public let limit: Int
    /// Whose budget this is, for messages: "this connection", "all connections".
    public let owner: String
    private let used = Atomic<Int>(0)
    private let parent: GRPCRequestBudget?

    /// A budget of `limit` bytes; with a `parent`, every reservation also draws on it.
    public init(limit: Int, owner: String, parent: GRPCRequestBudget? = nil) {
        self.limit = limit
        self.owner = owner
        self.parent = parent
    }

    /// Bytes reserved now.
    public var reserved: Int { used.load(ordering: .relaxed) }

    /// Reserves `bytes` here and in the parent; false (nothing reserved) when either is too full.
    public func reserve(_ bytes: Int) -> Bool {
        refusal(reserving: bytes) == nil
    }

    /// Reserves `bytes` here and in the parent. nil once reserved; otherwise nothing is reserved
    /// and the answer is the budget that had no room (this one or the parent), for the message.
    public func refusal(reserving bytes: Int) -> GRPCRequestBudget? {
        guard bytes > 0 else { return nil }
        guard used.add(bytes, ordering: .relaxed).newValue <= limit else {
            used.subtract(bytes, ordering: .relaxed)
            return self
        }
        if let parent, let refusal = parent.refusal(reserving: bytes) {
            used.subtract(bytes, ordering: .relaxed)
            return refusal
        }
        return nil
    }

    /// Gives back `bytes` reserved before.
    public func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        used.subtract(bytes, ordering: .relaxed)
        parent?.release(bytes)
    }
}
