/// The counters every HTTP/2 mock server keeps, whatever it mocks: connections, streams and
/// answers. A mock's stats type holds one and reads its members as its own
/// (`@dynamicMemberLookup`): `stats.maxInFlight`, `stats.count(status: 200)`.
public struct MockServerCounters: Sendable, Equatable {
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
    /// Error answers by the mock's error key (an error code, reason or OAuth error).
    public var byError: [String: Int] = [:]

    public init() {}

    /// `requests=N [200=… 400=…] errors[Reason=…]`, the start of a summary line.
    public var answerSummary: String {
        let statuses = byStatus.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let errors = byError.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "requests=\(requests) [\(statuses)]" + (errors.isEmpty ? "" : " errors[\(errors)]")
    }

    /// `streams=… cancelled=… connections=… open=… goaways=… max_in_flight=…`.
    public var connectionSummary: String {
        "streams=\(streamsOpened) cancelled=\(streamsCancelled)"
            + " connections=\(connectionsOpened) open=\(connectionsOpened - connectionsClosed)"
            + " goaways=\(goAwaysSent) max_in_flight=\(maxInFlight)"
    }
}

/// A mock's statistics snapshot as ``MockStatsRecorder`` keeps it: the shared counters, the
/// mock's own, and a ring of recent messages. The counters read as the snapshot's own members.
@dynamicMemberLookup
public protocol MockServerStats: Sendable {
    /// What the recent-messages ring holds.
    associatedtype Message: Sendable

    init()
    var counters: MockServerCounters { get set }
    /// The last recorded messages, oldest first.
    var recentMessages: [Message] { get set }
}

extension MockServerStats {
    public subscript<Value>(dynamicMember member: KeyPath<MockServerCounters, Value>) -> Value {
        counters[keyPath: member]
    }

    /// Requests answered with `status`.
    public func count(status: Int) -> Int { counters.byStatus[status, default: 0] }

    /// Error answers under `error` (the mock's error key).
    public func count(error: String) -> Int { counters.byError[error, default: 0] }
}
