/// One event waiting in a webhook's outbox.
public struct OutboxEvent: Sendable, Equatable {
    /// The webhook's name.
    public var webhook: String
    /// The event's JSON as it is sent (one element of the batch's `events`).
    public var json: String
    /// Unix ms when it was written (what `max_age_hours` counts from).
    public var createdAt: Int64

    public init(webhook: String, json: String, createdAt: Int64) {
        self.webhook = webhook
        self.json = json
        self.createdAt = createdAt
    }
}

/// A batch of one webhook's events, oldest first: the same rows, with the same id, every time it
/// is sent until it is completed.
public struct WebhookBatch: Sendable, Equatable {
    /// One event of the batch: its JSON, or the id of a finished message whose final state the
    /// sender renders.
    public enum Event: Sendable, Equatable {
        case json(String)
        case messageFinished(messageID: String, at: Int64)
        case messageCancelled(messageID: String, cancelled: Int64, at: Int64)
    }

    /// The `Pushgate-Delivery` id.
    public var id: String
    public var events: [Event]
    /// Events dropped (`max_pending`, `max_age_hours`) before this batch was formed, reported in
    /// it; and when it was formed (Unix ms).
    public var dropped: Int64
    public var formedAt: Int64

    public init(id: String, events: [Event], dropped: Int64 = 0, formedAt: Int64 = 0) {
        self.id = id
        self.events = events
        self.dropped = dropped
        self.formedAt = formedAt
    }

    /// Nothing to send.
    public var isEmpty: Bool { events.isEmpty && dropped == 0 }
}

/// What a fan-out commit writes beside its progress, in the same transaction: the endpoints to
/// disable (dead tokens), its delivery-log rows and its webhook events, so none of them can be
/// lost between two commits.
public struct FanOutRecords: Sendable, Equatable {
    /// An endpoint to disable, and why.
    public struct Disable: Sendable, Equatable {
        public var endpointID: String
        public var reason: String

        public init(endpointID: String, reason: String) {
            self.endpointID = endpointID
            self.reason = reason
        }
    }

    public var disable: [Disable]
    public var deliveries: [DeliveryLogRecord]
    public var events: [OutboxEvent]

    public init(disable: [Disable] = [], deliveries: [DeliveryLogRecord] = [], events: [OutboxEvent] = []) {
        self.disable = disable
        self.deliveries = deliveries
        self.events = events
    }

    public static let none = FanOutRecords()
}

/// What trimming an outbox dropped.
public struct OutboxTrim: Sendable, Equatable {
    /// The oldest events beyond `max_pending`.
    public var overflow: Int
    /// Events older than `max_age_hours`.
    public var expired: Int

    public init(overflow: Int = 0, expired: Int = 0) {
        self.overflow = overflow
        self.expired = expired
    }

    public var total: Int { overflow + expired }
}
