/// Where a published message is in its life (mirrors `pushgate.v1.MessageState`).
public enum MessageState: String, Sendable, Equatable, CaseIterable {
    /// Stored; fan-out has not started.
    case accepted
    /// Fan-out is running (or was, when the process stopped: see `Store.unfinishedMessages()`).
    case fanningOut
    /// Every recipient has a result.
    case completed
    /// The TTL ran out before fan-out finished; the rest were skipped.
    case expired

    /// Whether the fan-out is over; progress can no longer be recorded.
    public var isFinished: Bool { self == .completed || self == .expired }
}

/// A published message and its delivery progress.
public struct MessageRecord: Sendable, Equatable {
    /// The message id returned by Publish; unique.
    public var id: String
    /// The topic published to, or `nil` for a direct endpoint publish.
    public var topic: String?
    /// The endpoint published to, or `nil` for a topic publish. Exactly one of the two is set.
    public var endpointID: String?
    /// The message body as published.
    public var message: String
    /// `"json"` or `""`.
    public var messageStructure: String
    /// Message attributes (name → string value) for filter policies and APNs headers.
    public var attributes: [String: String]
    /// Unix milliseconds.
    public var publishedAt: Int64
    /// Where the message is in its life.
    public var state: MessageState
    /// Recipients found so far; grows as fan-out pages are committed (the sum over the fan-out's
    /// chunks).
    public var total: Int64
    /// Accepted by the push service.
    public var delivered: Int64
    /// Refused by the push service for this token or payload.
    public var rejected: Int64
    /// Could not be delivered (transport errors after retries).
    public var failed: Int64
    /// Not attempted: disabled endpoint, filter policy mismatch, or TTL ran out.
    public var skipped: Int64
    /// Recipients held for their provider (unreachable, or refusing everything for now): counted in
    /// `total` and in none of the results yet; sent to again as their chunks resume.
    public var waitingForProvider: Int64 = 0

    /// Makes a record; a new message starts `accepted` with zero counts.
    public init(
        id: String, topic: String? = nil, endpointID: String? = nil, message: String, messageStructure: String = "",
        attributes: [String: String] = [:], publishedAt: Int64, state: MessageState = .accepted, total: Int64 = 0,
        delivered: Int64 = 0, rejected: Int64 = 0, failed: Int64 = 0, skipped: Int64 = 0
    ) {
        self.id = id
        self.topic = topic
        self.endpointID = endpointID
        self.message = message
        self.messageStructure = messageStructure
        self.attributes = attributes
        self.publishedAt = publishedAt
        self.state = state
        self.total = total
        self.delivered = delivered
        self.rejected = rejected
        self.failed = failed
        self.skipped = skipped
    }
}
