import PushSync

/// A switch that a background sender (a fan-out whose message was cancelled) flips to take back
/// what it queued: requests of a collector that has it are FAILED `Cancelled` (code `.cancelled`)
/// instead of going out when their turn comes; those already on the wire finish as usual.
public final class DeliveryCancellation: Sendable {
    private let flag = Locked(false)

    public init() {}

    public func cancel() { flag.withLock { $0 = true } }

    public var isCancelled: Bool { flag.withLock { $0 } }
}
