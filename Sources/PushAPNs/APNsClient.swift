#if canImport(Glibc)
import Glibc
#endif
import PushCore
import PushMetrics
import PushPosix
import PushTLS
import Synchronization

/// How an app proves itself to APNs.
public enum APNsCredentials: Sendable {
    /// Token auth: an ES256 JWT from a `.p8` key, shared per (team, key).
    case providerToken(ProviderTokenCache)
    /// Certificate auth: the app's certificate is the TLS client identity (set in the TLS context).
    case certificate
}

/// Sends one app's notifications to APNs over a pool of long-lived HTTP/2 connections, each on one
/// event loop, and reports one result per token.
public final class APNsClient: Sendable {
    public let name: String
    private let app: APNsAppContext
    private let connections: [APNsConnection]
    private let usesProviderToken: Bool
    private let nextConnection = Atomic<Int>(0)

    /// Connections open on first use and stay open. `requestSeconds`, when given, gets the submit →
    /// response time of every request that got a response.
    public init(
        name: String, endpoint: APNsEndpoint, credentials: APNsCredentials, tlsContext: TLSContext,
        configuration: APNsClientConfiguration, group: EventLoopGroup,
        clock: @escaping @Sendable () -> Int64 = APNsClient.unixSeconds,
        logger: @escaping @Sendable (String, (any Error)?) -> Void = { _, _ in },
        requestSeconds: Histogram? = nil
    ) {
        self.name = name
        var tokens: ProviderTokenCache?
        if case .providerToken(let cache) = credentials { tokens = cache }
        usesProviderToken = tokens != nil
        let app = APNsAppContext(
            name: name, endpoint: endpoint, tlsContext: tlsContext, providerTokens: tokens,
            configuration: configuration, clock: clock, logger: logger, requestSeconds: requestSeconds)
        self.app = app
        let count = max(1, configuration.connections)
        let offset = Int.random(in: 0..<group.loops.count)
        connections = (0..<count).map { index in
            APNsConnection(loop: group.loops[(offset + index) % group.loops.count], app: app)
        }
    }

    /// Takes room for `count` requests in this app's bounded queue; false when it is full (the
    /// caller answers RESOURCE_EXHAUSTED and sends nothing). Each request sent through
    /// ``send(_:notificationIndex:firstSlot:collector:)`` gives its room back when it has a result.
    public func reserve(_ count: Int) -> Bool {
        app.reserve(count)
    }

    /// Gives back room reserved and not used.
    public func unreserve(_ count: Int) {
        app.release(count)
    }

    /// Requests held now (queued, waiting to retry, in flight).
    public var heldRequests: Int { app.heldCount }

    /// Connections open now (TLS and HTTP/2 set up, not yet closed). Any thread.
    public var openConnections: Int {
        connections.reduce(0) { $0 + ($1.isOpen.load(ordering: .relaxed) ? 1 : 0) }
    }

    /// Requests sent and not yet answered, over all connections. Any thread.
    public var streamsInFlight: Int {
        connections.reduce(0) { $0 + $1.streamsInFlight.load(ordering: .relaxed) }
    }

    /// When the provider token in use was signed (Unix seconds); nil with certificate auth or
    /// before the first one.
    public var providerTokenIssuedAt: Int64? { app.providerTokens?.issuedAt }

    /// Sends a prepared notification to each of its tokens; token `i`'s result goes to slot
    /// `firstSlot + i` of `collector`. Room must have been reserved.
    public func send(
        _ notification: PreparedNotification, notificationIndex: Int, firstSlot: Int, collector: DeliveryCollector
    ) {
        let job = APNsJob(
            notification, notificationIndex: notificationIndex, authority: app.endpoint.authority,
            usesProviderToken: usesProviderToken, collector: collector)
        let tokens = notification.tokens
        // A small send from a loop that has one of this app's connections stays on that loop: no
        // thread hop on the way out, and the answer comes back to the same thread (the gRPC
        // handlers run on their connection's loop).
        if tokens.count <= Self.localSendLimit, let local = connections.first(where: { $0.loop.inEventLoop }) {
            local.enqueue(tokens.indices.map { APNsRequest(job: job, token: tokens[$0], slot: firstSlot + $0) })
            return
        }
        // Split the tokens in contiguous chunks, one hop per connection (not per token).
        let chunk = (tokens.count + connections.count - 1) / connections.count
        let start = nextConnection.add(1, ordering: .relaxed).oldValue
        var index = 0
        var turn = 0
        while index < tokens.count {
            let end = min(index + chunk, tokens.count)
            let requests = (index..<end).map { APNsRequest(job: job, token: tokens[$0], slot: firstSlot + $0) }
            let connection = connections[(start + turn) % connections.count]
            connection.loop.execute { connection.enqueue(requests) }
            index = end
            turn += 1
        }
    }

    /// Sends of at most this many tokens go to a connection on the caller's loop when there is one.
    static let localSendLimit = 64

    /// Fails what is queued and closes the connections.
    public func shutdown() {
        for connection in connections {
            connection.loop.execute { connection.shutdown() }
        }
    }

    /// The most streams that were ever open at once on any connection (for tests and metrics).
    public func peakStreamsInFlight() async -> Int {
        var peak = 0
        for connection in connections {
            peak = max(peak, await withCheckedContinuation { continuation in
                connection.loop.execute { continuation.resume(returning: connection.peakInFlight) }
            })
        }
        return peak
    }

    @Sendable public static func unixSeconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }
}
