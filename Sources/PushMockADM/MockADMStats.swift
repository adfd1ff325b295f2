public import PushMockSupport

/// An accepted (200) send as the mock received it.
public struct MockADMMessage: Sendable {
    /// Which connection (numbered from 1 in accept order) and stream carried it.
    public let connectionID: Int
    public let streamID: Int32
    /// The registration id in the path (percent-decoded).
    public let registrationID: String
    /// The id the mock answered with: the canonical one when the id was configured as replaced,
    /// else the same.
    public let answeredRegistrationID: String
    /// The `x-amzn-requestid` of the answer.
    public let requestID: String
    /// The request body as received.
    public let body: [UInt8]

    public var bodyString: String { String(decoding: body, as: UTF8.self) }
    /// True when the answer carried a canonical id.
    public var isCanonical: Bool { answeredRegistrationID != registrationID }
}

/// A snapshot of what a ``MockADMServer`` has seen since it started (or since `resetStats`).
///
/// Counters are updated before the response is handed to HTTP/2: by the time a client has read
/// a response, the snapshot counts it.
public struct MockADMStats: MockServerStats, Sendable {
    /// Connections, streams, answers by status and by error: ADM `reason` (`Unregistered`), and
    /// token-endpoint errors by OAuth error (`invalid_client`). Read through the stats
    /// (`stats.maxInFlight`, `stats.count(error: "Unregistered")`).
    public var counters = MockServerCounters()

    /// Requests to the token endpoint, and how many got an access token.
    public var tokenRequests = 0
    public var tokensIssued = 0
    /// Requests to `/messaging/registrations/{id}/messages`.
    public var sendRequests = 0
    /// 200 answers to sends, and how many of them carried a canonical id.
    public var delivered = 0
    public var canonicalIDs = 0
    /// The last accepted sends, oldest first (at most `recordMessages`).
    public var recentMessages: [MockADMMessage] = []

    public init() {}

    /// One line for logs.
    public var summary: String {
        counters.answerSummary + " token_requests=\(tokenRequests) tokens_issued=\(tokensIssued)"
            + " sends=\(sendRequests) delivered=\(delivered) canonical=\(canonicalIDs) " + counters.connectionSummary
    }
}
