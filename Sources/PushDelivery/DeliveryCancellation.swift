import Synchronization

/// A switch that a background sender (a fan-out whose message was cancelled) flips to take back
/// what it queued: requests of a collector that has it are FAILED `Cancelled` (code `.cancelled`)
/// instead of going out when their turn comes; those already on the wire finish as usual.
///
/// An atomic, not a lock: the connections' loops read it for every request of a fan-out page.
public final class DeliveryCancellation: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public func cancel() { flag.store(true, ordering: .releasing) }

    public var isCancelled: Bool { flag.load(ordering: .acquiring) }
}
