import Synchronization

// What a `pushgate bench` phase runs and what its connections share and report.

enum BenchMode: String, Sendable {
    /// Push/Send, one RPC per request, `concurrency` in flight (or at `rate`).
    case send
    /// Push/SendStream: `concurrency` streams, each with up to `pipeline` requests outstanding.
    case stream
    /// Push/Publish: one call to a topic of `--subscribers` endpoints, timed until the fan-out
    /// completes (``BenchPublish``, not these connections).
    case publish
    /// No RPC: Web Push's encryption per message and subscriber, timed on one thread
    /// (``BenchEncryption``).
    case encrypt

    var path: String {
        switch self {
        case .send: "/pushgate.v1.Push/Send"
        case .stream: "/pushgate.v1.Push/SendStream"
        case .publish: "/pushgate.v1.Push/Publish"
        case .encrypt: ""
        }
    }
}

/// What one phase (warm-up or the measured run) does.
struct BenchWorkload: Sendable {
    var mode: BenchMode
    /// One serialized request message (not framed).
    var message: [UInt8]
    /// Notifications (tokens) per request message.
    var tokensPerRequest: Int
    /// Unary: RPCs in flight (at most, with a rate). Stream: SendStream calls.
    var concurrency: Int
    /// Stream mode: requests outstanding per SendStream call.
    var pipeline: Int
    /// RPCs (request messages) per second over all connections; nil: closed loop.
    var rate: Double?
    /// Request messages to send at most.
    var maxRequests: Int
    /// The per-RPC grpc-timeout (unary calls).
    var timeout: Duration
    /// `authorization`'s value, for a --target gateway with api_keys; nil: none sent.
    var authorization: String? = nil
}

/// State shared by every connection of a phase; counters for the progress line.
final class BenchShared: Sendable {
    let workload: BenchWorkload
    let issued = Atomic<Int>(0)
    let stopping = Atomic<Bool>(false)
    let finishedConnections = Atomic<Int>(0)
    let completedRequests = Atomic<Int>(0)
    let completedResults = Atomic<Int>(0)
    let deliveredResults = Atomic<Int>(0)
    let failedRequests = Atomic<Int>(0)

    init(workload: BenchWorkload) { self.workload = workload }

    /// Takes one request from the budget; false once the count is used up or the phase is stopping.
    func claim() -> Bool {
        if stopping.load(ordering: .relaxed) { return false }
        return issued.wrappingAdd(1, ordering: .relaxed).oldValue < workload.maxRequests
    }

    var exhausted: Bool {
        stopping.load(ordering: .relaxed) || issued.load(ordering: .relaxed) >= workload.maxRequests
    }
}

/// What one connection measured.
struct BenchConnectionReport: Sendable {
    var latency = LatencyHistogram()
    /// Rate mode: each RPC's submission time and latency (ns), so that the RPCs in flight while the
    /// machine stalled can be told apart (``StallWindows``). At most ``sampleLimit`` per connection.
    var samples: [RPCSample] = []
    static let sampleLimit = 1_000_000
    var tally = ResultTally()
    var requests = 0
    var rpcErrors: [String: Int] = [:]
    /// Rate mode: sends skipped because `concurrency` RPCs were already in flight.
    var skippedSends = 0
    /// Rate mode: the largest delay between a send's due time and its submission (ns).
    var maxScheduleLagNanos: UInt64 = 0
    var unfinished = 0

    mutating func merge(_ other: BenchConnectionReport) {
        latency.merge(other.latency)
        samples += other.samples
        tally.merge(other.tally)
        requests += other.requests
        for (key, count) in other.rpcErrors { rpcErrors[key, default: 0] += count }
        skippedSends += other.skippedSends
        maxScheduleLagNanos = max(maxScheduleLagNanos, other.maxScheduleLagNanos)
        unfinished += other.unfinished
    }
}
