import PushMetrics
import PushTLS
import Synchronization

/// What every connection of one app shares: where to connect, with which TLS identity and provider
/// token, under which limits. Immutable except the admission counter.
final class APNsAppContext: Sendable {
    let name: String
    let endpoint: APNsEndpoint
    let tlsContext: TLSContext
    /// nil with certificate auth.
    let providerTokens: ProviderTokenCache?
    let configuration: APNsClientConfiguration
    /// Unix seconds (expiration checks); injected for tests.
    let clock: @Sendable () -> Int64
    let logger: @Sendable (String, (any Error)?) -> Void
    /// Submit → response time of each request that got a response; nil: not measured.
    let requestSeconds: Histogram?
    /// Requests held (queued, waiting to retry, in flight): bounded by `configuration.queueLimit`.
    private let held = Atomic<Int>(0)

    init(
        name: String, endpoint: APNsEndpoint, tlsContext: TLSContext, providerTokens: ProviderTokenCache?,
        configuration: APNsClientConfiguration, clock: @escaping @Sendable () -> Int64,
        logger: @escaping @Sendable (String, (any Error)?) -> Void, requestSeconds: Histogram? = nil
    ) {
        self.name = name
        self.endpoint = endpoint
        self.tlsContext = tlsContext
        self.providerTokens = providerTokens
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.requestSeconds = requestSeconds
    }

    /// Takes room for `count` requests, all or nothing.
    func reserve(_ count: Int) -> Bool {
        var current = held.load(ordering: .relaxed)
        while true {
            guard current + count <= configuration.queueLimit else { return false }
            let (exchanged, original) = held.compareExchange(
                expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    func release(_ count: Int) {
        held.subtract(count, ordering: .relaxed)
    }

    var heldCount: Int { held.load(ordering: .relaxed) }

    func log(_ message: String, _ error: (any Error)?) {
        logger(message, error)
    }
}
