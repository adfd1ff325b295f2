public import PushHTTP2
import PushMockSupport
import PushPosix
import PushSync

/// An accepted (200) request as the mock received it.
public struct MockAPNsRequest: Sendable {
    /// Which connection (numbered from 1 in accept order) and stream carried it.
    public let connectionID: Int
    public let streamID: Int32
    /// The device token from `:path`, lower-case hex.
    public let token: String
    /// Every header field as received (pseudo-headers included).
    public let headers: [HTTP2Header]
    public let payload: [UInt8]
    /// The `apns-id` the mock answered with (echoed or generated).
    public let apnsID: String

    /// The first value of header `name` (lower case), if present.
    public func header(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        return headers.first { $0.name == bytes }?.valueString
    }

    public var payloadString: String { String(decoding: payload, as: UTF8.self) }
}

/// A snapshot of what a ``MockAPNsServer`` has seen since it started (or since `resetStats`).
///
/// Counters are merged from each connection once per loop turn, before that turn's responses
/// are written to the socket: by the time a client has read a response, the snapshot counts it.
public struct MockAPNsStats: Sendable {
    public var connectionsOpened = 0
    public var connectionsClosed = 0
    /// TLS handshakes that failed (or connections closed before HTTP/2 began).
    public var handshakeFailures = 0
    /// Request header blocks received (streams opened by clients).
    public var streamsOpened = 0
    /// Requests answered, whatever the status.
    public var requests = 0
    public var byStatus: [Int: Int] = [:]
    /// Non-200 answers by reason string.
    public var byReason: [String: Int] = [:]
    /// 200s per device token (lower-case hex), for up to `maxTrackedTokens` distinct tokens.
    public var deliveredPerToken: [String: Int] = [:]
    /// Streams closed with REFUSED_STREAM (e.g. over the advertised limit before it took effect).
    public var streamsRefused = 0
    /// Streams the client reset (or that closed) before the mock answered.
    public var streamsCancelled = 0
    /// Connections whose first valid provider token raised the stream limit.
    public var authenticatedConnections = 0
    public var goAwaysSent = 0
    public var connectionsDropped = 0
    /// Connections that went silent (`stallAfterStreams`).
    public var connectionsStalled = 0
    /// SETTINGS frames that lowered MAX_CONCURRENT_STREAMS to 1 (`lowerStreamsAfter`).
    public var streamLimitsLowered = 0
    /// The highest number of concurrently open streams seen on any one connection.
    public var maxInFlight = 0
    /// The same per connection id (for up to `maxTrackedConnections` connections).
    public var maxInFlightPerConnection: [Int: Int] = [:]
    /// The last accepted requests, oldest first (at most `recordRequests`).
    public var recentRequests: [MockAPNsRequest] = []
    /// Broadcasts answered 200 (also counted in `byStatus` and `deliveredPerToken`, by channel id).
    public var broadcasts = 0
    /// Channel management requests by operation and status (`create 201`, `read 404`, `delete 204`,
    /// `list 200`, `other 403`…).
    public var channelRequests: [String: Int] = [:]
    /// Channels that exist now.
    public var channels = 0

    public init() {}

    /// 200 responses.
    public var delivered: Int { byStatus[200, default: 0] }

    /// Requests answered with `status`.
    public func count(status: Int) -> Int { byStatus[status, default: 0] }

    /// Requests answered with `reason` (its wire spelling, e.g. "BadDeviceToken").
    public func count(reason: String) -> Int { byReason[reason, default: 0] }

    /// One line for logs.
    public var summary: String {
        let statuses = byStatus.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let reasons = byReason.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "requests=\(requests) [\(statuses)]" + (reasons.isEmpty ? "" : " reasons[\(reasons)]")
            + " streams=\(streamsOpened) cancelled=\(streamsCancelled) refused=\(streamsRefused)"
            + " connections=\(connectionsOpened) open=\(connectionsOpened - connectionsClosed)"
            + " goaways=\(goAwaysSent) dropped=\(connectionsDropped) stalled=\(connectionsStalled)"
            + " lowered=\(streamLimitsLowered) max_in_flight=\(maxInFlight)"
            + " tokens=\(deliveredPerToken.count)" + " broadcasts=\(broadcasts) channels=\(channels)"
            + (channelRequests.isEmpty
                ? ""
                : " channel_requests[\(channelRequests.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))]")
    }
}

/// What one connection changed during a loop turn; merged into the recorder in one lock.
struct StatsDelta {
    var connectionsOpened = 0
    var connectionsClosed = 0
    var handshakeFailures = 0
    var streamsOpened = 0
    var requests = 0
    /// 200 answers (kept apart from `byStatus`: one add instead of a dictionary update each).
    var ok = 0
    /// Other answers by status.
    var byStatus: [Int: Int] = [:]
    var byReason: [String: Int] = [:]
    /// The token of each 200, as received (a String per request costs an allocation and a UTF-8
    /// check; counting is left to the recorder, once per turn, instead of a dictionary here too).
    var deliveredTokens: [[UInt8]] = []
    var streamsRefused = 0
    var streamsCancelled = 0
    var authenticatedConnections = 0
    var goAwaysSent = 0
    var connectionsDropped = 0
    var connectionsStalled = 0
    var streamLimitsLowered = 0
    var maxInFlight = 0
    var recorded: [MockAPNsRequest] = []
    var broadcasts = 0
    var channelRequests: [String: Int] = [:]

    var isEmpty: Bool {
        connectionsOpened == 0 && connectionsClosed == 0 && handshakeFailures == 0 && streamsOpened == 0
            && requests == 0 && ok == 0 && streamsRefused == 0 && streamsCancelled == 0 && authenticatedConnections == 0
            && goAwaysSent == 0 && connectionsDropped == 0 && connectionsStalled == 0 && streamLimitsLowered == 0
            && maxInFlight == 0 && broadcasts == 0 && channelRequests.isEmpty && deliveredTokens.isEmpty
    }
}

/// The server-wide statistics behind a lock. Updated at most once per connection per loop turn.
final class StatsRecorder: Sendable {
    private struct State {
        var stats = MockAPNsStats()
        /// `stats.deliveredPerToken` by token bytes; converted in ``snapshot()``.
        var deliveredPerToken = TokenTally()
        /// Ring of recorded requests; `next` is where the next one goes.
        var ring: [MockAPNsRequest] = []
        var next = 0
    }

    private let state = Locked(State())
    private let recordLimit: Int
    private let tokenLimit: Int
    private let connectionLimit: Int

    init(recordLimit: Int, tokenLimit: Int, connectionLimit: Int) {
        self.recordLimit = max(0, recordLimit)
        self.tokenLimit = max(0, tokenLimit)
        self.connectionLimit = max(0, connectionLimit)
    }

    func merge(_ delta: StatsDelta, connectionID: Int) {
        state.withLock { state in
            var stats = state.stats
            state.stats = MockAPNsStats()  // keep `stats` uniquely referenced while editing it
            stats.connectionsOpened += delta.connectionsOpened
            stats.connectionsClosed += delta.connectionsClosed
            stats.handshakeFailures += delta.handshakeFailures
            stats.streamsOpened += delta.streamsOpened
            stats.requests += delta.requests
            if delta.ok > 0 { stats.byStatus[200, default: 0] += delta.ok }
            for (status, count) in delta.byStatus { stats.byStatus[status, default: 0] += count }
            for (reason, count) in delta.byReason { stats.byReason[reason, default: 0] += count }
            for token in delta.deliveredTokens {
                state.deliveredPerToken.add(token, limit: tokenLimit)
            }
            stats.streamsRefused += delta.streamsRefused
            stats.streamsCancelled += delta.streamsCancelled
            stats.authenticatedConnections += delta.authenticatedConnections
            stats.goAwaysSent += delta.goAwaysSent
            stats.connectionsDropped += delta.connectionsDropped
            stats.connectionsStalled += delta.connectionsStalled
            stats.streamLimitsLowered += delta.streamLimitsLowered
            stats.broadcasts += delta.broadcasts
            for (key, count) in delta.channelRequests { stats.channelRequests[key, default: 0] += count }
            if delta.maxInFlight > 0 {
                stats.maxInFlight = max(stats.maxInFlight, delta.maxInFlight)
                if let current = stats.maxInFlightPerConnection[connectionID] {
                    if delta.maxInFlight > current { stats.maxInFlightPerConnection[connectionID] = delta.maxInFlight }
                } else if stats.maxInFlightPerConnection.count < connectionLimit {
                    stats.maxInFlightPerConnection[connectionID] = delta.maxInFlight
                }
            }
            state.stats = stats
            for request in delta.recorded where recordLimit > 0 {
                if state.ring.count < recordLimit {
                    state.ring.append(request)
                } else {
                    state.ring[state.next] = request
                }
                state.next = (state.next + 1) % recordLimit
            }
        }
    }

    func snapshot() -> MockAPNsStats {
        state.withLock { state in
            var stats = state.stats
            stats.deliveredPerToken = state.deliveredPerToken.counts
            if state.ring.count < recordLimit {
                stats.recentRequests = state.ring
            } else {
                stats.recentRequests = Array(state.ring[state.next...] + state.ring[..<state.next])
            }
            return stats
        }
    }

    func reset() {
        state.withLock { state in
            // Keep the connection gauge: connections still open would otherwise go negative.
            let open = state.stats.connectionsOpened - state.stats.connectionsClosed
            state = State()
            state.stats.connectionsOpened = open
        }
    }
}
