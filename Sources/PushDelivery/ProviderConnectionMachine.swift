import PushCore
import PushTransport

/// Everything one provider connection decides, as a plain value: its lifecycle (idle, connecting,
/// ready, draining), the queue, the requests on the wire, retries and their due times, refused
/// streams, reconnect backoff and liveness (PING, stall). Events go in (with the time, and for
/// answers the dialect's reading of them); ``ProviderConnectionMachine/Action``s come out for the
/// driver (``ProviderConnection``) to carry out on its transport. No I/O, no clock, no global
/// randomness: the unit tests drive it through GOAWAYs, refusals, stalls and outages without a
/// socket.
///
/// It knows nothing of HTTP versions: a request in flight is keyed by an id the driver chooses
/// (the HTTP/2 stream id), and "how many may be in flight" is the driver's to say.
///
/// Not generic (see ``ProviderRequest``): the hot paths run without run-time metadata look-ups.
///
/// One job a file: work and credentials here, then `+Lifecycle` (connecting, GOAWAY, the close),
/// `+Answers` (outcomes, retries, refused streams), `+Liveness` (deadlines, PING, stalls) and
/// `+Values`. Its state is internal for those extensions only: the driver goes through the
/// members documented for it.
struct ProviderConnectionMachine {
    let configuration: Settings
    var phase = Phase.idle
    private(set) var isShutDown = false
    var queue = RequestQueue<ProviderRequest>()
    /// Requests waiting out a retry backoff (or a refusal's).
    var delayed = DueQueue<ProviderRequest>()
    /// When ``delayed`` is next looked through for requests whose sender took them back or was
    /// answered (``ProviderConnectionMachine/delayedSweepInterval``); nil while nothing waits.
    var nextDelayedSweep: UInt64?
    var streams = StreamSlots()
    var inFlight: [InFlight?] = []
    /// The peer's limit on requests in flight (SETTINGS_MAX_CONCURRENT_STREAMS); nil until its
    /// settings arrived, and nothing is sent before.
    var peerLimit: UInt32?
    /// Failed connects in a row (refusals included): the connect backoff grows with it. Reset when
    /// a connection the provider answered on closes without being a refusal.
    var connectFailures = 0
    /// The provider has answered on this connection (its SETTINGS, an HTTP/1.1 answer): until
    /// then a close is a failed connect (``ConnectionRefusal``), not a lost connection.
    var peerAnswered = false
    /// A stream of this connection was answered: a GOAWAY before that is a refusal.
    var streamAnswered = false
    /// A GOAWAY came before any stream was answered: its text, the cause if the connection closes
    /// with no answer after it.
    var goAwayBeforeAnswer: String?
    /// When the connection was made: a GOAWAY long after it, with nothing ever asked, is an idle
    /// connection's goodbye, not a refusal.
    var connectedAt: UInt64 = 0
    /// The last connect was refused for our certificate: while its backoff runs, new work fails at
    /// once with its reason instead of waiting for a connection that will be refused the same way.
    var certificateRefusal: ConnectionRefusal?
    var reconnectAt: UInt64?
    var handshakeDeadline: UInt64?
    var awaitingAuthorization = false
    /// "the provider refuses streams" was reported for this connection.
    var reportedRefusals = false
    /// When the connection last made progress (an answer); 0: the stall watch starts afresh.
    var lastProgressAt: UInt64 = 0
    var nextLivenessCheck: UInt64?
    var pingSentAt: UInt64?
    /// The connection's protocol has PING (HTTP/2); without it (HTTP/1.1) an idle connection is
    /// closed after the ping interval instead, and a silent one is caught by the stall watch.
    var pings = true
    var random: SplitMix64
    /// The most requests ever in flight at once on this connection.
    private(set) var peakInFlight = 0

    init(configuration: ProviderClientConfiguration, seed: UInt64) {
        self.configuration = Settings(configuration)
        random = SplitMix64(seed: seed)
    }

    var inFlightCount: Int { streams.count }
    var queuedCount: Int { queue.count }
    var delayedCount: Int { delayed.count }
    var isConnected: Bool { phase == .ready || phase == .draining }

    /// When the machine wants ``tick(at:lastReceivedAt:into:)`` next: the handshake deadline, the
    /// reconnect, the first due retry, the next sweep of the retries, or the next liveness check.
    // Inlined: read from the driver's stored machine, a getter call copied the whole machine
    // (every queue and table retained and released) after every event.
    @inline(__always) var nextDeadline: UInt64? {
        // No array of candidates: this is read after every event, answers included.
        var earliest = handshakeDeadline ?? UInt64.max
        if let reconnectAt, reconnectAt < earliest { earliest = reconnectAt }
        if let due = delayed.nextDue, due < earliest { earliest = due }
        if let sweep = nextDelayedSweep, sweep < earliest { earliest = sweep }
        if isConnected, let check = nextLivenessCheck, check < earliest { earliest = check }
        return earliest == UInt64.max ? nil : earliest
    }

    // MARK: Work

    mutating func enqueue(_ requests: [ProviderRequest], into actions: inout [Action]) {
        guard !isShutDown else {
            for request in requests {
                actions.append(.finish(request, request.result(.failed, .shutdown, reason: "Shutdown")))
            }
            return
        }
        queue.append(contentsOf: requests)
        pump(into: &actions)
    }

    /// One request (a 1-token Send): the same as `enqueue([request])`, without the array.
    mutating func enqueue(_ request: consuming ProviderRequest, into actions: inout [Action]) {
        guard !isShutDown else {
            let result = request.result(.failed, .shutdown, reason: "Shutdown")
            actions.append(.finish(request, result))
            return
        }
        queue.append(request)
        pump(into: &actions)
    }

    /// Final: what waits fails (`Shutdown`), what is in flight fails when the connection closes
    /// (not retried), later work fails at once, and nothing reconnects.
    mutating func shutDown(into actions: inout [Action]) {
        isShutDown = true
        reconnectAt = nil
        nextDelayedSweep = nil
        for request in queue.removeAll() + delayed.removeAll() {
            actions.append(.finish(request, request.result(.failed, .shutdown, reason: "Shutdown")))
        }
        if phase != .idle { actions.append(.closeGracefully) }
    }

    /// Whether requests may go out now, and if so `.submit` (or `.connect` when there is none).
    mutating func pump(into actions: inout [Action]) {
        guard !isShutDown, !queue.isEmpty else { return }
        switch phase {
        case .idle:
            if reconnectAt == nil {
                phase = .connecting
                actions.append(.connect)
            } else if let certificateRefusal {
                finishQueued(
                    .failed, .unreachable, reason: "ProviderUnreachable: \(certificateRefusal)", into: &actions)
            }
        case .ready:
            if !awaitingAuthorization, streams.count < limit { actions.append(.submit) }
        case .connecting, .draining:
            break
        }
    }

    private var limit: Int {
        guard let peerLimit else { return 0 }
        return Int(min(peerLimit, configuration.maxConcurrentStreams))
    }

    /// The next request to send, while there is room; nil when none may go now. Requests whose
    /// Send was already answered (its deadline passed) are dropped here.
    mutating func nextSubmission(into actions: inout [Action]) -> ProviderRequest? {
        guard phase == .ready, !awaitingAuthorization, !isShutDown else { return nil }
        while streams.count < limit, var request = queue.popFirst() {
            if let result = Self.abandonment(of: request) {
                actions.append(.finish(request, result))
                continue
            }
            request.attempts += 1
            return consume request
        }
        return nil
    }

    /// How a request nobody waits for any more ends: its Send was answered (its deadline passed),
    /// or its sender took it back (a cancelled fan-out). Nil while it is wanted.
    @inline(__always) static func abandonment(of request: borrowing ProviderRequest) -> DeliveryResult? {
        let collector = request.job.collector
        if collector.isFinished { return request.result(.failed, .deadlineExceeded, reason: "DeadlineExceeded") }
        if collector.isCancelled { return request.cancelledResult }
        return nil
    }

    /// `request` went out as `id`: returns the slot its answer is kept in by the driver.
    mutating func submitted(
        _ request: consuming ProviderRequest, id: Int32, generation: Int64, at time: Time
    ) -> Int {
        let entry = InFlight(request: request, submittedAt: time.now, generation: generation)
        let (slot, isNew) = streams.open(id)
        if isNew { inFlight.append(entry) } else { inFlight[slot] = entry }
        peakInFlight = max(peakInFlight, streams.count)
        return slot
    }

    /// `request` itself cannot be sent (its token does not parse, its body could not be
    /// encrypted): it is FAILED with `reason`, and the connection carries on with the rest.
    mutating func requestRefused(_ request: ProviderRequest, reason: String, into actions: inout [Action]) {
        actions.append(.finish(request, request.result(.failed, .unsendable, reason: reason)))
    }

    /// `request` could not be written (the session refused it): it keeps its turn and attempt,
    /// and the connection is closed (nothing more goes on it).
    mutating func submitFailed(_ request: ProviderRequest, error: any Error, into actions: inout [Action]) {
        phase = .draining
        var request = request
        request.attempts -= 1
        queue.prepend(request)
        actions.append(.close(TransportError("\(error)")))
    }

    /// The slot of request `id` while it is in flight.
    func slot(of id: Int32) -> Int? { streams.slot(of: id) }

    // MARK: Credentials

    mutating func authorizationPending() { awaitingAuthorization = true }

    /// The credential arrived, or fetching it is over: send again.
    mutating func authorizationChanged(into actions: inout [Action]) {
        awaitingAuthorization = false
        pump(into: &actions)
    }

    /// No credential can be had: what waits is FAILED with `reason`.
    mutating func authorizationFailed(_ reason: String, into actions: inout [Action]) {
        finishQueued(.failed, .noCredential, reason: reason, into: &actions)
    }

    /// Ends what waits for a connection with `status` and `code` (and the requests waiting out a
    /// retry backoff, when `delayedToo`).
    mutating func finishQueued(
        _ status: DeliveryStatus, _ code: DeliveryCode, reason: String, delayedToo: Bool = false,
        into actions: inout [Action]
    ) {
        let waiting = delayedToo ? queue.removeAll() + delayed.removeAll() : queue.removeAll()
        if delayedToo { nextDelayedSweep = nil }
        for request in waiting {
            // One its sender took back is reported so whatever else ends it.
            let result =
                request.job.collector.isCancelled
                ? request.cancelledResult : request.result(status, code, reason: reason)
            actions.append(.finish(request, result))
        }
    }

    mutating func unitRandom() -> Double { Double(random.next() >> 11) * 0x1p-53 }
}
