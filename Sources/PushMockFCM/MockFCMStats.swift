import Synchronization

/// An accepted (200) send as the mock received it.
public struct MockFCMMessage: Sendable {
    /// Which connection (numbered from 1 in accept order) and stream carried it.
    public let connectionID: Int
    public let streamID: Int32
    /// The target: `token`, `topic` or `condition` and its value.
    public let targetKind: String
    public let target: String
    /// `validate_only` was true (nothing would be delivered).
    public let validateOnly: Bool
    /// The request body as received.
    public let body: [UInt8]
    /// The `name` the mock answered with.
    public let name: String

    public var bodyString: String { String(decoding: body, as: UTF8.self) }
}

/// A snapshot of what a ``MockFCMServer`` has seen since it started (or since `resetStats`).
///
/// Counters are updated before the response is handed to HTTP/2: by the time a client has read
/// a response, the snapshot counts it.
public struct MockFCMStats: Sendable {
    public var connectionsOpened = 0
    public var connectionsClosed = 0
    /// TLS handshakes that failed (or connections closed before HTTP/2 began).
    public var handshakeFailures = 0
    /// Request header blocks received.
    public var streamsOpened = 0
    /// Streams the client reset (or that closed) before the mock answered.
    public var streamsCancelled = 0
    public var goAwaysSent = 0
    /// The highest number of concurrently open streams seen on any one connection.
    public var maxInFlight = 0

    /// Requests answered, whatever the path and status.
    public var requests = 0
    public var byStatus: [Int: Int] = [:]
    /// Error answers by FCM errorCode (`UNREGISTERED`), else canonical status (`UNAUTHENTICATED`),
    /// and token-endpoint errors by OAuth error (`invalid_grant`).
    public var byError: [String: Int] = [:]

    /// Requests to the token endpoint, and how many got an access token.
    public var tokenRequests = 0
    public var tokensIssued = 0
    /// Requests to `messages:send`.
    public var sendRequests = 0
    /// 200 answers to sends without `validate_only` / with it.
    public var delivered = 0
    public var validatedOnly = 0
    /// 200s (not validate_only) per registration token, for up to `maxTrackedTokens` tokens.
    public var deliveredPerToken: [String: Int] = [:]
    /// The last accepted sends, oldest first (at most `recordMessages`).
    public var recentMessages: [MockFCMMessage] = []

    public init() {}

    /// Requests answered with `status`.
    public func count(status: Int) -> Int { byStatus[status, default: 0] }

    /// Error answers under `error` (an FCM errorCode, canonical status or OAuth error).
    public func count(error: String) -> Int { byError[error, default: 0] }

    /// One line for logs.
    public var summary: String {
        let statuses = byStatus.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let errors = byError.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "requests=\(requests) [\(statuses)]" + (errors.isEmpty ? "" : " errors[\(errors)]")
            + " token_requests=\(tokenRequests) tokens_issued=\(tokensIssued)"
            + " sends=\(sendRequests) delivered=\(delivered) validate_only=\(validatedOnly)"
            + " streams=\(streamsOpened) cancelled=\(streamsCancelled)"
            + " connections=\(connectionsOpened) open=\(connectionsOpened - connectionsClosed)"
            + " goaways=\(goAwaysSent) max_in_flight=\(maxInFlight) tokens=\(deliveredPerToken.count)"
    }
}

/// The server-wide statistics behind a Mutex.
final class MockFCMStatsRecorder: Sendable {
    private struct State {
        var stats = MockFCMStats()
        var ring: [MockFCMMessage] = []
        var next = 0
    }

    private let state = Mutex(State())
    private let recordLimit: Int
    private let tokenLimit: Int

    init(recordLimit: Int, tokenLimit: Int) {
        self.recordLimit = max(0, recordLimit)
        self.tokenLimit = max(0, tokenLimit)
    }

    func update(_ change: (inout MockFCMStats) -> Void) {
        state.withLock { change(&$0.stats) }
    }

    /// Counts an answer; `error` is its stats key when it was one.
    func answered(status: Int, error: String?) {
        state.withLock { state in
            state.stats.requests += 1
            state.stats.byStatus[status, default: 0] += 1
            if let error { state.stats.byError[error, default: 0] += 1 }
        }
    }

    /// Counts and records an accepted send.
    func accepted(_ message: MockFCMMessage) {
        state.withLock { state in
            if message.validateOnly {
                state.stats.validatedOnly += 1
            } else {
                state.stats.delivered += 1
                if message.targetKind == "token",
                    state.stats.deliveredPerToken[message.target] != nil || state.stats.deliveredPerToken.count < tokenLimit
                {
                    state.stats.deliveredPerToken[message.target, default: 0] += 1
                }
            }
            guard recordLimit > 0 else { return }
            if state.ring.count < recordLimit {
                state.ring.append(message)
            } else {
                state.ring[state.next] = message
            }
            state.next = (state.next + 1) % recordLimit
        }
    }

    func snapshot() -> MockFCMStats {
        state.withLock { state in
            var stats = state.stats
            stats.recentMessages = state.ring.count < recordLimit ? state.ring : Array(state.ring[state.next...] + state.ring[..<state.next])
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
