#if canImport(Glibc)
import PushTransport
import Glibc
#endif
import PushCore
import PushMetrics
import PushPosix
import PushTLS
import Synchronization

/// What the gateway sends through: one app's pool of provider connections behind a bounded queue.
public protocol DeliveryClient: AnyObject, Sendable {
    /// The app's name.
    var name: String { get }
    /// Takes room for `count` requests in the app's bounded queue; false when it is full (the caller
    /// answers RESOURCE_EXHAUSTED and sends nothing). Each request sent gives its room back when it
    /// has a result.
    func reserve(_ count: Int) -> Bool
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
    func send(_ push: PreparedPush, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector)
    /// Fails what is queued and closes the connections.
    func shutdown()
    /// The most streams that were ever open at once on any connection.
    func peakStreamsInFlight() async -> Int
    /// When the credential in use (APNs provider token, FCM access token) was obtained, Unix
    /// seconds; nil without one.
    var credentialIssuedAt: Int64? { get }
}

/// Sends one app's notifications to its provider over a pool of long-lived HTTP/2 connections, each
/// on one event loop, and reports one result per token. The dialect makes it APNs or FCM.
public final class ProviderClient<Dialect: ProviderDialect>: DeliveryClient {
    public let name: String
    public let dialect: Dialect
    private let app: ProviderAppContext<Dialect>
    /// The app's connections, each made on first need (it connects on its first request). A small
    /// send made on a loop that has none of them yet makes the next one on that loop: its requests
    /// and answers then never leave the thread that waits for them (no hop, no wake-up of another
    /// thread either way). Sends that need them all make the rest on the loops in turn.
    private let connections: [ProviderConnectionSlot]
    private let loops: [EventLoop]
    private let nextLoop: Atomic<Int>
    private let nextConnection = Atomic<Int>(0)

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
        connections = (0..<max(1, configuration.connections)).map { _ in ProviderConnectionSlot() }
        loops = group.loops
        // Apps' connections made for large sends start on different loops.
        nextLoop = Atomic(Int.random(in: 0..<group.loops.count))
    }

    /// The loops of the connections made so far, in slot order (for tests).
    var connectionLoops: [EventLoop] { madeConnections.map(\.loop) }

    /// Connections made so far.
    private var madeConnections: [ProviderConnection<Dialect>] {
        connections.compactMap { $0.load(Dialect.self) }
    }

    /// Connection `index`, made on `loop` (or the next loop in turn) if it is not made yet.
    private func connection(_ index: Int, on loop: EventLoop? = nil) -> ProviderConnection<Dialect> {
        if let made = connections[index].load(Dialect.self) { return made }
        let chosen = loop ?? loops[nextLoop.add(1, ordering: .relaxed).oldValue % loops.count]
        return connections[index].storeIfNil(ProviderConnection(loop: chosen, app: app))
    }

    /// A connection on the calling thread's loop: one made there, or the next one not made yet,
    /// made there. Nil when the caller is on no loop of this client or every connection is elsewhere.
    private func localConnection() -> ProviderConnection<Dialect>? {
        guard let loop = EventLoop.current, loops.contains(where: { $0 === loop }) else { return nil }
        for slot in connections.indices {
            guard let made = connections[slot].load(Dialect.self) else {
                let candidate = connection(slot, on: loop)
                // Another thread may have made it first, on its own loop: look further.
                if candidate.loop === loop { return candidate }
                continue
            }
            if made.loop === loop { return made }
        }
        return nil
    }

    public func reserve(_ count: Int) -> Bool {
        app.reserve(count)
    }

    public func unreserve(_ count: Int) {
        app.release(count)
    }

    public var heldRequests: Int { app.heldCount }

    public var credentialIssuedAt: Int64? { dialect.credentialIssuedAt }

    public var openConnections: Int {
        madeConnections.reduce(0) { $0 + ($1.isOpen.load(ordering: .relaxed) ? 1 : 0) }
    }

    public var streamsInFlight: Int {
        madeConnections.reduce(0) { $0 + $1.streamsInFlight.load(ordering: .relaxed) }
    }

    public func send(_ push: PreparedPush, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector) {
        let tokens = push.tokens
        guard let job = dialect.makeJob(for: push, notificationIndex: notificationIndex, collector: collector) else {
            for (offset, token) in tokens.enumerated() {
                app.release(1)
                collector.complete(
                    slot: firstSlot + offset,
                    with: DeliveryResult(
                        notificationIndex: notificationIndex, token: token, status: .failed,
                        reason: "WrongPlatform: app \(name) is not a \(dialect.providerName) app"))
            }
            return
        }
        // A small send from a loop that has one of this app's connections stays on that loop: no
        // thread hop on the way out, and the answer comes back to the same thread (the gRPC
        // handlers run on their connection's loop).
        if tokens.count <= Self.localSendLimit, let local = localConnection() {
            local.enqueue(tokens.indices.map { ProviderRequest(job: job, token: tokens[$0], slot: firstSlot + $0) })
            return
        }
        // Split the tokens in contiguous chunks, one hop per connection (not per token).
        let chunk = (tokens.count + connections.count - 1) / connections.count
        let start = nextConnection.add(1, ordering: .relaxed).oldValue
        var index = 0
        var turn = 0
        while index < tokens.count {
            let end = min(index + chunk, tokens.count)
            let requests = (index..<end).map { ProviderRequest(job: job, token: tokens[$0], slot: firstSlot + $0) }
            let connection = connection((start + turn) % connections.count)
            connection.loop.execute { connection.enqueue(requests) }
            index = end
            turn += 1
        }
    }

    /// Sends of at most this many tokens go to a connection on the caller's loop when there is one.
    static var localSendLimit: Int { 64 }

    public func shutdown() {
        // A connection not made yet has nothing to fail; one made after this fails its work at
        // once only if shut down too, so every slot gets one now (they never connect).
        for slot in connections.indices {
            let connection = connection(slot)
            connection.loop.execute { connection.shutdown() }
        }
    }

    public func peakStreamsInFlight() async -> Int {
        var peak = 0
        for connection in madeConnections {
            peak = max(peak, await withCheckedContinuation { continuation in
                connection.loop.execute { continuation.resume(returning: connection.peakInFlight) }
            })
        }
        return peak
    }
}

extension DeliveryClient {
    /// Sends one push, with room already reserved for its tokens, and waits for one result per
    /// token (until `deadline`, then the rest are FAILED `DeadlineExceeded`). For callers that
    /// deliver one push at a time: fan-out pages, tools, tests.
    public func sendAndWait(_ push: PreparedPush, deadline: ContinuousClock.Instant?) async -> [DeliveryResult] {
        let collector = DeliveryCollector(
            placeholders: push.tokens.map { DeliveryResult(notificationIndex: 0, token: $0, status: .failed) })
        send(push, notificationIndex: 0, firstSlot: 0, collector: collector)
        return await collector.results(deadline: deadline)
    }
}

/// One connection of a ``ProviderClient``, made once (`AtomicLazyReference` cannot be an array
/// element by itself).
///
/// Not generic, and not nested in the generic client (which would make it generic): the client's
/// methods run unspecialized (callers hold an `any DeliveryClient`), and there every use of a slot
/// generic over the dialect looked up the metadata of the slot, its `AtomicLazyReference`, the
/// connection type and the slot array at run time, ~3,000 instructions per Send. The slot only
/// ever holds a `ProviderConnection` of its client's dialect.
private final class ProviderConnectionSlot: @unchecked Sendable {
    private let reference = AtomicLazyReference<AnyObject>()

    func load<Dialect: ProviderDialect>(_: Dialect.Type) -> ProviderConnection<Dialect>? {
        guard let connection = reference.load() else { return nil }
        return unsafeDowncast(connection, to: ProviderConnection<Dialect>.self)
    }

    func storeIfNil<Dialect: ProviderDialect>(_ connection: ProviderConnection<Dialect>) -> ProviderConnection<Dialect> {
        unsafeDowncast(reference.storeIfNil(connection), to: ProviderConnection<Dialect>.self)
    }
}
