public import PushMockSupport

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
public struct MockFCMStats: MockServerStats, Sendable {
    /// Connections, streams, answers by status and by error: FCM errorCode (`UNREGISTERED`), else
    /// canonical status (`UNAUTHENTICATED`), and token-endpoint errors by OAuth error
    /// (`invalid_grant`). Read through the stats (`stats.maxInFlight`).
    public var counters = MockServerCounters()

    /// Requests to the token endpoint, and how many got an access token.
    public var tokenRequests = 0
    public var tokensIssued = 0
    /// Requests to `messages:send`.
    public var sendRequests = 0
    /// 200 answers to sends without `validate_only` / with it.
    public var delivered = 0
    public var validatedOnly = 0
    /// 200s (not validate_only) per registration token, for up to `maxTrackedTokens` tokens.
    public var deliveredPerToken: [String: Int] { tokenTally.counts }
    package var tokenTally = TokenTally()
    /// The last accepted sends, oldest first (at most `recordMessages`).
    public var recentMessages: [MockFCMMessage] = []

    public init() {}

    /// One line for logs.
    public var summary: String {
        counters.answerSummary + " token_requests=\(tokenRequests) tokens_issued=\(tokensIssued)"
            + " sends=\(sendRequests) delivered=\(delivered) validate_only=\(validatedOnly) "
            + counters.connectionSummary + " tokens=\(tokenTally.count)"
    }
}
