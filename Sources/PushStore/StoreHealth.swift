import PushSync
import Synchronization

/// Whether the store works: failing from a call that failed for a reason of the store itself (its
/// file, disk, database server or schema; not a request's own fault such as `notFound`) until a
/// later call succeeds. Both engines report every call here; the owner hears of each change (to log
/// it and to say NOT_SERVING in health checks) and of each failure while failing.
///
/// A succeeding call costs one atomic load.
public final class StoreHealth: Sendable {
    public enum Change: Sendable {
        /// The store began failing, or failed again while failing (`first` false).
        case failed(StoreError, first: Bool)
        /// A call succeeded after failures.
        case recovered
    }

    private let failing = Atomic<Bool>(false)
    private let handler = Locked<(@Sendable (Change) -> Void)?>(nil)

    public init() {}

    /// Calls `handler` on every change from now on (on the thread of the store call).
    public func onChange(_ handler: @escaping @Sendable (Change) -> Void) {
        self.handler.withLock { $0 = handler }
    }

    public var isFailing: Bool { failing.load(ordering: .relaxed) }

    /// Whether a failure says the store itself is broken rather than the request.
    public static func isStoreFailure(_ error: StoreError) -> Bool {
        error.code == .io || error.code == .internal || error.code == .incompatible
    }

    /// Records how one call ended (nil: it succeeded).
    func record(_ error: StoreError?) {
        guard let error else {
            guard failing.load(ordering: .relaxed) else { return }
            if failing.exchange(false, ordering: .relaxed) { notify(.recovered) }
            return
        }
        // A request's own fault (notFound, conflict, …) says nothing about the store.
        guard Self.isStoreFailure(error) else { return }
        let first = !failing.exchange(true, ordering: .relaxed)
        notify(.failed(error, first: first))
    }

    private func notify(_ change: Change) {
        handler.withLock { $0 }?(change)
    }
}

extension SQLStore {
    /// Runs `body` as ``SQLStore/withDatabase(_:)`` does and records how it ended in ``Store/health``.
    func recorded<T>(_ body: () async throws(StoreError) -> T) async throws(StoreError) -> T {
        do {
            let value = try await body()
            health.record(nil)
            return value
        } catch {
            health.record(error)
            throw error
        }
    }
}
