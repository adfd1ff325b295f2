/// Where a published message is in its life (mirrors `pushgate.v1.MessageState`).
public enum MessageState: String, Sendable, Equatable, CaseIterable {
    /// Stored with a `deliverAt` still to come; claiming moves it to `accepted` once that time came.
    case scheduled
    /// Stored; fan-out has not started.
    case accepted
    /// Fan-out is running (or was, when the process stopped: see `Store.unfinishedMessages()`).
    case fanningOut
    /// Every recipient has a result.
    case completed
    /// The TTL ran out before fan-out finished; the rest were skipped.
    case expired
    /// Stopped by `Store.cancelMessage`: no chunk is planned any more, and chunks still being worked
    /// end at their next page (the recipients they did not reach counted `cancelled`).
    case cancelled

    /// Whether the fan-out is over: nothing more starts (chunks of a cancelled message may still be
    /// recording their last pages).
    public var isFinished: Bool { self == .completed || self == .expired || self == .cancelled }
}

/// Whom a message goes to.
public enum MessageTarget: Sendable, Equatable {
    /// A topic's subscribers.
    case topic(String)
    /// One endpoint.
    case endpoint(String)
    /// Every endpoint with this user id, in `apps` only (empty: every app).
    case user(String, apps: [String])

    /// Whether the recipients are many rows read in pages (a topic's, a user's), not one endpoint.
    public var isFannedOut: Bool {
        if case .endpoint = self { return false }
        return true
    }
}

/// A published message and its delivery progress.
public struct MessageRecord: Sendable, Equatable {
    /// The message id returned by Publish; unique.
    public var id: String
    /// The topic published to, or `nil` for a direct endpoint publish.
    public var topic: String?
    /// The endpoint published to, or `nil`. Exactly one of `topic`, `endpointID` and `userID` is set.
    public var endpointID: String?
    /// The user published to (every endpoint with this user id), or `nil`.
    public var userID: String?
    /// A user publish's apps: the publisher's grant, fixed when published (empty: every app).
    public var apps: [String] = []
    /// Unix ms the fan-out starts (`scheduled` until then); 0: at once.
    public var deliverAt: Int64 = 0
    /// The most recipients sent to per second, over all instances; 0: no cap.
    public var maxPerSecond: Int32 = 0
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
    /// Not sent to because the message was cancelled (counted in `total`).
    public var cancelled: Int64 = 0
    /// The webhooks that get a `message_finished` event when it finishes (fixed when published), in
    /// the transaction that finishes it.
    public var notify: [String] = []

    /// Whom the message goes to; nil only for a record that breaks the one-target rule.
    public var target: MessageTarget? {
        switch (topic, endpointID, userID) {
        case (let topic?, nil, nil): .topic(topic)
        case (nil, let endpointID?, nil): .endpoint(endpointID)
        case (nil, nil, let userID?): .user(userID, apps: apps)
        default: nil
        }
    }

    /// When the fan-out starts (Unix ms): `deliverAt`, or the publish for an immediate message. A
    /// TTL and the fan-out's hold limit count from it.
    public var startsAt: Int64 { deliverAt > 0 ? deliverAt : publishedAt }

    /// Makes a record; a new message starts `accepted` (or `scheduled`) with zero counts.
    public init(
        id: String, topic: String? = nil, endpointID: String? = nil, userID: String? = nil, apps: [String] = [],
        message: String, messageStructure: String = "", attributes: [String: String] = [:], publishedAt: Int64,
        deliverAt: Int64 = 0, maxPerSecond: Int32 = 0, state: MessageState = .accepted, total: Int64 = 0,
        delivered: Int64 = 0, rejected: Int64 = 0, failed: Int64 = 0, skipped: Int64 = 0
    ) {
        self.id = id
        self.topic = topic
        self.endpointID = endpointID
        self.userID = userID
        self.apps = apps
        self.deliverAt = deliverAt
        self.maxPerSecond = maxPerSecond
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
