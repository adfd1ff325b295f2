import PushMetrics
import PushTLS
import PushTransport
import Synchronization

/// What every connection of one app shares: where to connect, with which TLS context and dialect,
/// under which limits. Immutable but for the count of requests held.
final class ProviderAppContext<Dialect: ProviderDialect>: Sendable {
    let name: String
    let endpoint: HTTPSOrigin
    let tlsContext: TLSContext
    let dialect: Dialect
    let configuration: ProviderClientConfiguration
    /// Unix seconds (expiration checks); injected for tests.
    let clock: @Sendable () -> Int64
    let logger: @Sendable (String, (any Error)?) -> Void
    let metrics: ProviderMetrics
    /// Requests held (queued, waiting to retry, in flight), over all the app's origins.
    let usage: ProviderAppUsage

    init(
        name: String, endpoint: HTTPSOrigin, tlsContext: TLSContext, dialect: Dialect,
        configuration: ProviderClientConfiguration, clock: @escaping @Sendable () -> Int64,
        logger: @escaping @Sendable (String, (any Error)?) -> Void, metrics: ProviderMetrics = ProviderMetrics()
    ) {
        self.name = name
        self.endpoint = endpoint
        self.tlsContext = tlsContext
        self.dialect = dialect
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        usage = ProviderAppUsage(limit: configuration.queueLimit)
    }

    func log(_ message: String, _ error: (any Error)?) {
        logger("\(dialect.providerName) \(message)", error)
    }
}

/// An app's requests held (queued, waiting to retry, in flight), bounded by its `queue_limit`.
final class ProviderAppUsage: Sendable {
    private let limit: Int
    private let held = Atomic<Int>(0)
    /// Callers waiting for room (fan-out pages): woken by releases.
    private let waiters = RoomWaiters()

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes room for `count` requests, all or nothing.
    func reserve(_ count: Int) -> Bool {
        // Relaxed: only a release and a waiter's register-then-look must be ordered (below).
        var current = held.load(ordering: .relaxed)
        while true {
            guard current + count <= limit else { return false }
            let (exchanged, original) = held.compareExchange(
                expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Takes room for `count` requests, waiting for releases to make it; false if the task is
    /// cancelled first.
    func reserveWaiting(_ count: Int) async -> Bool {
        while !reserve(count) {
            guard
                await waiters.wait(for: count, room: { [self] in limit - held.load(ordering: .sequentiallyConsistent) })
            else { return false }
        }
        return true
    }

    func release(_ count: Int) {
        // Sequentially consistent with the waiters' count: a waiter either sees this room when it
        // checks after registering, or is registered when this looks.
        let room = limit - held.subtract(count, ordering: .sequentiallyConsistent).newValue
        waiters.wake(room: room)
    }

    var count: Int { held.load(ordering: .relaxed) }
}
