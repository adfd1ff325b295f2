import PushCore
import PushGRPC
import PushSync

/// Resolves the ``Caller`` of each call against the configured keys (which SIGHUP may replace).
final class Authorizer: Sendable {
    private let current: Locked<(keys: APIKeys, generation: Int)>

    init(keys: APIKeys) {
        current = Locked((keys, 0))
    }

    var keys: APIKeys { current.withLock { $0.keys } }

    /// Grows with every ``replace(_:)``: a long call compares it to learn that its caller must be
    /// checked again (a key removed by SIGHUP stops working on streams opened before, too).
    var generation: Int { current.withLock { $0.generation } }

    func replace(_ keys: APIKeys) {
        current.withLock { $0 = (keys, $0.generation + 1) }
    }

    func caller(_ context: GRPCCallContext) throws(GRPCStatus) -> Caller {
        try Caller.resolve(keys: keys, context: context)
    }
}
