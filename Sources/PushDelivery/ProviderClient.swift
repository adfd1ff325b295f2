public import PushCore
import PushMetrics
public import PushPosix
import PushSync
public import PushTLS
public import PushTransport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the gateway sends through: one app's pool of provider connections behind a bounded queue.
public protocol DeliveryClient: AnyObject, Sendable {
    /// The app's name.
    var name: String { get }
    /// Takes room for `count` requests in the app's bounded queue; false when it is full (the caller
    /// answers RESOURCE_EXHAUSTED and sends nothing). Each request sent gives its room back when it
    /// has a result.
    func reserve(_ count: Int) -> Bool
    /// Takes room for `count` requests, waiting while the queue is full (for background work that
    /// may wait for Sends); false if the task is cancelled first.
    func reserveWaiting(_ count: Int) async -> Bool
    /// Gives back room reserved and not used.
    func unreserve(_ count: Int)
    /// Requests held now (queued, waiting to retry, in flight).
    var heldRequests: Int { get }
    /// Connections open now. Any thread.
    var openConnections: Int { get }
    /// Requests sent and not yet answered, over all connections. Any thread.
    var streamsInFlight: Int { get }
    /// Sends a prepared push to each of its tokens; token `i`'s result goes to slot `firstSlot + i`
    /// of `collector`. Room must have been reserved. A push for another platform than the app's is
    /// FAILED (`WrongPlatform`).
    func send(_ push: consuming PreparedPush, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector)
    /// Why a Send with these tokens cannot be taken now, or nil: it would need pools for more
    /// origins than the app may have (only for a dialect whose tokens name their origin). The
    /// caller answers RESOURCE_EXHAUSTED with it.
    func originRefusal(tokens: [String]) -> String?
    /// Fails what is queued and closes the connections.
    func shutdown()
    /// The most streams that were ever open at once on any connection.
    func peakStreamsInFlight() async -> Int
    /// When the credential in use (APNs provider token, FCM access token) was obtained, Unix
    /// seconds; nil without one.
    var credentialIssuedAt: Int64? { get }
}

/// Sends one app's notifications to its provider over pools of long-lived HTTP/2 or HTTP/1.1
/// connections, each connection on one event loop, and reports one result per token. The dialect
/// makes it APNs, FCM or ADM.
///
/// Every request goes to the app's endpoint unless the dialect routes by token (each Web Push
/// subscription names its push service): then each origin a token names gets a pool of its own,
/// made on first use. Those pools are bounded (`maxOrigins`; a Send that would need more is
/// refused up front, see ``originRefusal(tokens:)``) and closed once idle for `originIdleTimeout`.
public final class ProviderClient<Dialect: ProviderDialect>: DeliveryClient {
    public let name: String
    public let dialect: Dialect
    private let app: ProviderAppContext<Dialect>
    /// The pool for the app's endpoint.
    private let home: ProviderOriginPool<Dialect>
    /// Pools for other origins, by origin.
    private let others = Locked<[HTTPSOrigin: ProviderOriginPool<Dialect>]>([:])
    /// Whether a sweep for idle pools is scheduled.
    private let sweepScheduled = Atomic<Bool>(false)
    private let loops: [EventLoop]

    /// Connections open on first use and stay open. `metrics` gets the submit →
    /// response time of every request that got a response.
    public init(
        name: String, endpoint: HTTPSOrigin, dialect: Dialect, tlsContext: TLSContext,
        configuration: ProviderClientConfiguration, group: EventLoopGroup,
        clock: @escaping @Sendable () -> Int64 = unixSeconds,
        logger: @escaping @Sendable (String, (any Error)?) -> Void = { _, _ in },
        metrics: ProviderMetrics = ProviderMetrics()
    ) {
        self.name = name
        self.dialect = dialect
        let app = ProviderAppContext(
            name: name, endpoint: endpoint, tlsContext: tlsContext, dialect: dialect, configuration: configuration,
            clock: clock, logger: logger, metrics: metrics)
        self.app = app
        loops = group.loops
        home = ProviderOriginPool(
            origin: endpoint, app: app, connections: configuration.connections, loops: group.loops)
    }

    /// The engine settings the client was made with.
    public var configuration: ProviderClientConfiguration { app.configuration }

    /// The loops of the app endpoint's connections made so far, in slot order (for tests).
    var connectionLoops: [EventLoop] { home.connectionLoops }

    /// The origins other than the app's endpoint that have a pool now.
    public var otherOrigins: [HTTPSOrigin] {
        others.withLock { Array($0.keys) }
    }

    private var allPools: [ProviderOriginPool<Dialect>] {
        [home] + others.withLock { Array($0.values) }
    }

    public func reserve(_ count: Int) -> Bool {
        app.usage.reserve(count)
    }

    public func reserveWaiting(_ count: Int) async -> Bool {
        await app.usage.reserveWaiting(count)
    }

    public func unreserve(_ count: Int) {
        app.usage.release(count)
    }

    public var heldRequests: Int { app.usage.count }

    public var credentialIssuedAt: Int64? { dialect.credentialIssuedAt }

    /// The client certificate its connections present (certificate auth); nil without one.
    public var clientCertificate: CertificateSummary? { app.tlsContext.clientCertificate }

    public var openConnections: Int {
        allPools.reduce(0) { $0 + $1.openConnections }
    }

    public var streamsInFlight: Int {
        allPools.reduce(0) { $0 + $1.streamsInFlight }
    }

    public func originRefusal(tokens: [String]) -> String? {
        guard dialect.routesByToken else { return nil }
        var needed = Set<HTTPSOrigin>()
        for token in tokens {
            if let origin = dialect.origin(ofToken: token), origin != app.endpoint { needed.insert(origin) }
        }
        let limit = app.configuration.maxOrigins
        let (pooled, new) = others.withLock { pools in (pools.count, needed.filter { pools[$0] == nil }.count) }
        guard pooled + new > limit else { return nil }
        return "app \(name) sends to \(pooled) other origins now and this request names \(new) more; "
            + "max_origins is \(limit); retry later or send to fewer push services at once"
    }

    public func send(
        _ push: consuming PreparedPush, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector
    ) {
        let tokens = push.tokens
        guard let job = dialect.makeJob(for: push, notificationIndex: notificationIndex, collector: collector) else {
            for (offset, token) in tokens.enumerated() {
                fail(
                    token, slot: firstSlot + offset, notificationIndex: notificationIndex, collector: collector,
                    code: .wrongPlatform, reason: "WrongPlatform: app \(name) is not a \(dialect.providerName) app")
            }
            return
        }
        guard dialect.routesByToken else {
            home.usage.take(tokens.count)
            home.send(count: tokens.count) { ProviderRequest(job: job, token: tokens[$0], slot: firstSlot + $0) }
            return
        }
        var byOrigin: [HTTPSOrigin: [Int]] = [:]
        for index in tokens.indices {
            guard
                let origin = dialect.origin(ofToken: tokens[index])
                    ?? (dialect.failsUnroutedTokens ? nil : app.endpoint)
            else {
                fail(
                    tokens[index], slot: firstSlot + index, notificationIndex: notificationIndex, collector: collector,
                    code: .unroutableToken,
                    reason:
                        "InvalidToken: app \(name) has no origin to send this token to (for \(dialect.providerName): "
                        + "not a subscription on a host the app allows)")
                continue
            }
            byOrigin[origin, default: []].append(index)
        }
        for (origin, indices) in byOrigin {
            guard let pool = pool(for: origin, taking: indices.count) else {
                // Only when Sends raced past ``originRefusal(tokens:)`` together.
                for index in indices {
                    fail(
                        tokens[index], slot: firstSlot + index, notificationIndex: notificationIndex,
                        collector: collector, code: .tooManyOrigins,
                        reason: "TooManyOrigins: app \(name) already sends to \(app.configuration.maxOrigins) other "
                            + "origins (max_origins)")
                }
                continue
            }
            pool.send(count: indices.count) {
                ProviderRequest(job: job, token: tokens[indices[$0]], slot: firstSlot + indices[$0])
            }
        }
    }

    private func fail(
        _ token: String, slot: Int, notificationIndex: Int, collector: DeliveryCollector, code: DeliveryCode,
        reason: String
    ) {
        app.usage.release(1)
        collector.complete(
            slot: slot,
            with: DeliveryResult(
                notificationIndex: notificationIndex, token: token, status: .failed, code: code, reason: reason))
    }

    /// `origin`'s pool, made if there is room, with `count` requests taken (under the table's lock,
    /// so that the sweep never drops a pool being sent to).
    private func pool(for origin: HTTPSOrigin, taking count: Int) -> ProviderOriginPool<Dialect>? {
        if origin == app.endpoint {
            home.usage.take(count)
            return home
        }
        let (pool, made) = others.withLock { pools -> (ProviderOriginPool<Dialect>?, Bool) in
            if let pool = pools[origin] {
                pool.usage.take(count)
                return (pool, false)
            }
            guard pools.count < app.configuration.maxOrigins else { return (nil, false) }
            let pool = ProviderOriginPool(
                origin: origin, app: app, connections: app.configuration.connections, loops: loops)
            pool.usage.take(count)
            pools[origin] = pool
            return (pool, true)
        }
        if made {
            app.log("pool for \(origin.authority) opened", nil)
            scheduleSweep()
        }
        return pool
    }

    // MARK: Idle pools

    /// Every half idle timeout while other pools exist, on the first loop.
    private func scheduleSweep() {
        guard sweepScheduled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
            return
        }
        let loop = loops[0]
        let interval = app.configuration.originIdleTimeout / 2
        loop.execute { [weak self] in
            _ = loop.schedule(after: interval) { [weak self] in self?.sweep() }
        }
    }

    /// Drops the pools that have held nothing for the idle timeout and closes their connections.
    private func sweep() {
        sweepScheduled.store(false, ordering: .relaxed)
        let now = EventLoop.monotonicNow
        let idleFor = nanoseconds(app.configuration.originIdleTimeout)
        let (dropped, remaining) = others.withLock { pools -> ([ProviderOriginPool<Dialect>], Int) in
            var dropped: [ProviderOriginPool<Dialect>] = []
            for (origin, pool) in pools {
                if let since = pool.usage.idleSinceNanoseconds, now &- since >= idleFor {
                    dropped.append(pool)
                    pools[origin] = nil
                }
            }
            return (dropped, pools.count)
        }
        for pool in dropped {
            pool.close()
            app.log("pool for \(pool.origin.authority) closed: idle for \(app.configuration.originIdleTimeout)", nil)
        }
        if remaining > 0 { scheduleSweep() }
    }

    public func shutdown() {
        for pool in allPools { pool.shutdown() }
    }

    public func peakStreamsInFlight() async -> Int {
        var peak = 0
        for pool in allPools { peak = max(peak, await pool.peakStreamsInFlight()) }
        return peak
    }
}

extension DeliveryClient {
    /// Sends one push, with room already reserved for its tokens, and waits for one result per
    /// token (until `deadline`, then the rest are FAILED `DeadlineExceeded`; once `cancellation`
    /// is flipped, those not yet sent are FAILED `Cancelled`). For callers that deliver one push
    /// at a time: fan-out pages, tools, tests.
    public func sendAndWait(
        _ push: PreparedPush, deadline: ContinuousClock.Instant?, cancellation: DeliveryCancellation? = nil
    ) async -> [DeliveryResult] {
        let collector = DeliveryCollector(
            placeholders: push.tokens.map {
                DeliveryResult(notificationIndex: 0, token: $0, status: .failed, code: .deadlineExceeded)
            }, cancellation: cancellation)
        send(push, notificationIndex: 0, firstSlot: 0, collector: collector)
        return await collector.results(deadline: deadline)
    }
}
