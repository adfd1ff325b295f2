public import PushMockSupport

/// An accepted send (answered 80000000 or 80100000) as the mock received it.
public struct MockHMSMessage: Sendable {
    /// `v3` or `v1`.
    public let api: String
    /// Which connection (numbered from 1 in accept order) and stream carried it.
    public let connectionID: Int
    public let streamID: Int32
    /// v3: the `push-type` header; nil on v1.
    public let pushType: Int?
    /// The tokens delivered to, and those refused as invalid.
    public let deliveredTokens: [String]
    public let failedTokens: [String]
    /// v1 `validate_only` (checked and answered, not delivered).
    public let validateOnly: Bool
    /// The answer's `requestId`.
    public let requestID: String
    /// The request body as received.
    public let body: [UInt8]

    public var bodyString: String { String(decoding: body, as: UTF8.self) }
}

/// A snapshot of what a ``MockHMSServer`` has seen since it started (or since `resetStats`).
///
/// Counters are updated before the response is handed to HTTP: by the time a client has read a
/// response, the snapshot counts it.
public struct MockHMSStats: MockServerStats, Sendable {
    /// Connections, streams, answers by status and by error: the business code (`80300007`), token
    /// endpoint errors as `oauth-<sub_error>`, `FlowControl` for 503, `NotFound` for 404.
    public var counters = MockServerCounters()

    /// Requests to the token endpoint, and how many got an access token.
    public var tokenRequests = 0
    public var tokensIssued = 0
    /// Requests to `/v3/{projectId}/messages:send` and `/v1/{appId}/messages:send`.
    public var v3Sends = 0
    public var v1Sends = 0
    /// Sends answered 80000000 or 80100000 (not validate_only), and of these the partial successes.
    public var accepted = 0
    public var partialSuccesses = 0
    /// v1 `validate_only` sends answered 80000000.
    public var validatedOnly = 0
    /// Tokens delivered to in accepted sends, and tokens refused as invalid (in any answer).
    public var tokensDelivered = 0
    public var tokensRefused = 0
    /// Accepted deliveries per push token, for up to `maxTrackedTokens` tokens.
    public var deliveredPerToken: [String: Int] { tokenTally.counts }
    package var tokenTally = TokenTally()
    /// The last accepted sends, oldest first (at most `recordMessages`).
    public var recentMessages: [MockHMSMessage] = []

    public init() {}

    /// One line for logs.
    public var summary: String {
        counters.answerSummary + " token_requests=\(tokenRequests) tokens_issued=\(tokensIssued)"
            + " v3_sends=\(v3Sends) v1_sends=\(v1Sends) accepted=\(accepted) partial=\(partialSuccesses)"
            + " tokens_delivered=\(tokensDelivered) tokens_refused=\(tokensRefused) "
            + counters.connectionSummary + " tokens=\(tokenTally.count)"
    }
}
