/// A piece of one message's fan-out, leased to one instance: a range of the topic's subscriptions
/// (in subscription order) and how far its owner got.
///
/// Any instance may claim a chunk (`Store.claimFanOutChunk`); while it works the chunk it renews the
/// lease and commits progress page by page. When an instance dies its leases run out and another
/// instance claims the chunk and resumes after its last committed cursor.
public struct FanOutChunk: Sendable, Equatable {
    /// The message being fanned out (with its attributes).
    public var message: MessageRecord
    /// The chunk's number within the message, from 0 in planning order.
    public var number: Int
    /// Where to resume: the fan-out position after which the next page starts (`""`: the topic's
    /// beginning). Opaque; pass it to `Store.fanOutPage(topic:after:through:limit:)`.
    public var cursor: String
    /// The last position the chunk covers; `nil`: to the topic's end (the message's last chunk, which
    /// also sees subscriptions added while the fan-out runs). Opaque.
    public var end: String?
    /// When the lease runs out (Unix milliseconds) unless renewed.
    public var leaseExpiresAt: Int64
    /// This claim's lease holder: the owner's id and a random suffix, new with every claim. Renewals
    /// and progress must present it, so a claim that was taken over — even by another worker of the
    /// same process — can record nothing more.
    public var claim: String
    /// Recipients the chunk holds for their provider (``FanOutHold``): send to them first.
    public var holds: Int
    /// Times the chunk parked with holds so far (its backoff grows with them).
    public var parkings: Int

    /// Makes a chunk.
    public init(
        message: MessageRecord, number: Int, cursor: String, end: String?, leaseExpiresAt: Int64, claim: String,
        holds: Int = 0, parkings: Int = 0
    ) {
        self.holds = holds
        self.parkings = parkings
        self.message = message
        self.number = number
        self.cursor = cursor
        self.end = end
        self.leaseExpiresAt = leaseExpiresAt
        self.claim = claim
    }
}

/// What part of a chunk added up to; the message's counts are the sum over its chunks.
public struct ProgressCounts: Sendable, Equatable {
    /// Recipients considered.
    public var total: Int64
    public var delivered: Int64
    public var rejected: Int64
    public var failed: Int64
    public var skipped: Int64
    /// Not sent to because the message was cancelled while they waited for their turn.
    public var cancelled: Int64

    /// Makes counts (each must be ≥ 0 when recorded).
    public init(
        total: Int64 = 0, delivered: Int64 = 0, rejected: Int64 = 0, failed: Int64 = 0, skipped: Int64 = 0,
        cancelled: Int64 = 0
    ) {
        self.total = total
        self.delivered = delivered
        self.rejected = rejected
        self.failed = failed
        self.skipped = skipped
        self.cancelled = cancelled
    }

    var isValid: Bool {
        total >= 0 && delivered >= 0 && rejected >= 0 && failed >= 0 && skipped >= 0 && cancelled >= 0
    }
}

/// How fan-out chunks are made and leased.
public struct FanOutLeasePolicy: Sendable, Equatable {
    /// Who claims: an id unique to the running process (every start makes a new one).
    public var owner: String
    /// How long a claim or renewal holds the chunk (milliseconds).
    public var leaseMillis: Int64
    /// Subscriptions per chunk when a topic's fan-out is split (the last chunk may hold more: it
    /// runs to the topic's end).
    public var chunkSize: Int

    /// Makes a policy.
    public init(owner: String, leaseMillis: Int64, chunkSize: Int) {
        self.owner = owner
        self.leaseMillis = leaseMillis
        self.chunkSize = chunkSize
    }
}

/// Which work a claim may take: an instance skips messages whose rate-capped chunk it works already
/// (one chunk per capped message per instance: more would only share the same cap), and every
/// capped message once it works as many as it allows.
public struct FanOutClaimFilter: Sendable, Equatable {
    /// Messages (ids) none of whose chunks to take.
    public var skippingMessages: [String]
    /// Whether chunks of messages with a `max_per_second` may be taken.
    public var paced: Bool

    public init(skippingMessages: [String] = [], paced: Bool = true) {
        self.skippingMessages = skippingMessages
        self.paced = paced
    }

    /// Any work.
    public static let any = FanOutClaimFilter()
}
