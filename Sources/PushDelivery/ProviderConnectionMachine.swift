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
struct ProviderConnectionMachine {
    let configuration: Settings
    private(set) var phase = Phase.idle
    private(set) var isShutDown = false
    private var queue = RequestQueue<ProviderRequest>()
    /// Requests waiting out a retry backoff (or a refusal's).
    private var delayed = DueQueue<ProviderRequest>()
    private var streams = StreamSlots()
    private var inFlight: [InFlight?] = []
    /// The peer's limit on requests in flight (SETTINGS_MAX_CONCURRENT_STREAMS); nil until its
    /// settings arrived, and nothing is sent before.
    private(set) var peerLimit: UInt32?
    /// Failed connects in a row (refusals included): the connect backoff grows with it. Reset when
    /// a connection the provider answered on closes without being a refusal.
    private var connectFailures = 0
    /// The provider has answered on this connection (its SETTINGS, an HTTP/1.1 answer): until
    /// then a close is a failed connect (``ConnectionRefusal``), not a lost connection.
    private var peerAnswered = false
    /// A stream of this connection was answered: a GOAWAY before that is a refusal.
    private var streamAnswered = false
    /// A GOAWAY came before any stream was answered: its text, the cause if the connection closes
    /// with no answer after it.
    private var goAwayBeforeAnswer: String?
    /// When the connection was made: a GOAWAY long after it, with nothing ever asked, is an idle
    /// connection's goodbye, not a refusal.
    private var connectedAt: UInt64 = 0
    /// The last connect was refused for our certificate: while its backoff runs, new work fails at
    /// once with its reason instead of waiting for a connection that will be refused the same way.
    private var certificateRefusal: ConnectionRefusal?
    private var reconnectAt: UInt64?
    private var handshakeDeadline: UInt64?
    private var awaitingAuthorization = false
    /// "the provider refuses streams" was reported for this connection.
    private var reportedRefusals = false
    /// When the connection last made progress (an answer); 0: the stall watch starts afresh.
    private var lastProgressAt: UInt64 = 0
    private var nextLivenessCheck: UInt64?
    private var pingSentAt: UInt64?
    /// The connection's protocol has PING (HTTP/2); without it (HTTP/1.1) an idle connection is
    /// closed after the ping interval instead, and a silent one is caught by the stall watch.
    private var pings = true
    private var random: SplitMix64
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
    /// reconnect, the first due retry, or the next liveness check.
    // Inlined: read from the driver's stored machine, a getter call copied the whole machine
    // (every queue and table retained and released) after every event (callgrind).
    @inline(__always) var nextDeadline: UInt64? {
        // No array of candidates: this is read after every event, answers included.
        var earliest = handshakeDeadline ?? UInt64.max
        if let reconnectAt, reconnectAt < earliest { earliest = reconnectAt }
        if let due = delayed.nextDue, due < earliest { earliest = due }
        if isConnected, let check = nextLivenessCheck, check < earliest { earliest = check }
        return earliest == UInt64.max ? nil : earliest
    }

    // MARK: Work

    mutating func enqueue(_ requests: [ProviderRequest], into actions: inout [Action]) {
        guard !isShutDown else {
            for request in requests { actions.append(.finish(request, request.result(.failed, reason: "Shutdown"))) }
            return
        }
        queue.append(contentsOf: requests)
        pump(into: &actions)
    }

    /// One request (a 1-token Send): the same as `enqueue([request])`, without the array.
    mutating func enqueue(_ request: consuming ProviderRequest, into actions: inout [Action]) {
        guard !isShutDown else {
            let result = request.result(.failed, reason: "Shutdown")
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
        for request in queue.removeAll() + delayed.removeAll() {
            actions.append(.finish(request, request.result(.failed, reason: "Shutdown")))
        }
        if phase != .idle { actions.append(.closeGracefully) }
    }

    /// Whether requests may go out now, and if so `.submit` (or `.connect` when there is none).
    private mutating func pump(into actions: inout [Action]) {
        guard !isShutDown, !queue.isEmpty else { return }
        switch phase {
        case .idle:
            if reconnectAt == nil {
                phase = .connecting
                actions.append(.connect)
            } else if let certificateRefusal {
                finishQueued(.failed, reason: "ProviderUnreachable: \(certificateRefusal)", into: &actions)
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
            if request.job.collector.isFinished {
                actions.append(.finish(request, request.result(.failed, reason: "DeadlineExceeded")))
                continue
            }
            request.attempts += 1
            return consume request
        }
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
        actions.append(.finish(request, request.result(.failed, reason: reason)))
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
        finishQueued(.failed, reason: reason, into: &actions)
    }

    /// Ends what waits for a connection with `status` (and the requests waiting out a retry
    /// backoff, when `delayedToo`).
    private mutating func finishQueued(
        _ status: DeliveryStatus, reason: String, delayedToo: Bool = false, into actions: inout [Action]
    ) {
        let waiting = delayedToo ? queue.removeAll() + delayed.removeAll() : queue.removeAll()
        for request in waiting {
            actions.append(.finish(request, request.result(status, reason: reason)))
        }
    }

    // MARK: Connection lifecycle

    mutating func connecting(at time: Time) {
        phase = .connecting
        peerLimit = nil
        handshakeDeadline = time.now &+ nanoseconds(configuration.connectTimeout)
    }

    /// The connect failed: TCP, TLS (a refusing alert), or a connection the provider ended before
    /// answering anything on it (``ConnectionRefusal``). The next attempt waits out the connect
    /// backoff (jittered, growing with each failure in a row, bounded by the retry policy's
    /// `maxBackoff`). What waits is FAILED `ProviderUnreachable` at once when the provider refused
    /// our certificate, else after `maxConnectAttempts` failures in a row.
    mutating func connectFailed(_ error: any Error, at time: Time, into actions: inout [Action]) {
        phase = .idle
        handshakeDeadline = nil
        connectFailures += 1
        let refusal = ConnectionRefusal.reading(error)
        if let refusal {
            actions.append(.report(.refused(refusal)))
        } else {
            actions.append(.report(.connectFailed(error)))
        }
        let refusesCertificate = refusal?.refusesCertificate ?? false
        certificateRefusal = refusesCertificate ? refusal : nil
        if refusesCertificate || connectFailures >= configuration.maxConnectAttempts {
            // Unreachable, or refusing us: fail what waits rather than hold it without end.
            let reason = "ProviderUnreachable: \(refusal.map { "\($0)" } ?? "\(error)")"
            finishQueued(.failed, reason: reason, delayedToo: refusesCertificate, into: &actions)
        }
        guard !isShutDown else { return }
        let delay = configuration.retry.backoff(afterAttempt: connectFailures, unit: unitRandom())
        reconnectAt = time.now &+ nanoseconds(delay)
    }

    /// The host's addresses may not be connected to (``AddressRefusal``): what waits is REJECTED
    /// with `reason` at once, as the same answer would come on every retry; a later request asks
    /// again (the resolver's cache makes that cheap).
    mutating func connectRefused(reason: String, into actions: inout [Action]) {
        phase = .idle
        handshakeDeadline = nil
        connectFailures = 0
        reconnectAt = nil
        actions.append(.report(.addressRefused(reason, requests: queue.count)))
        finishQueued(.rejected, reason: reason, into: &actions)
    }

    /// TLS (and ALPN) done: the connection may carry requests once the peer's settings arrive
    /// (HTTP/1.1: the driver reports a limit of 1 at once). `pings`: the protocol has PING.
    mutating func connected(at time: Time, pings: Bool = true, into actions: inout [Action]) {
        phase = .ready
        connectedAt = time.now
        peerAnswered = false
        streamAnswered = false
        goAwayBeforeAnswer = nil
        self.pings = pings
        handshakeDeadline = nil
        lastProgressAt = 0
        pingSentAt = nil
        nextLivenessCheck = time.now &+ nanoseconds(livenessTick)
        pump(into: &actions)
    }

    /// The provider answered on this connection (its first SETTINGS, or the head of an HTTP/1.1
    /// answer): it took our handshake, so a close from now on is a lost connection (unless a
    /// GOAWAY came before any stream was answered: APNs sends its SETTINGS first).
    mutating func peerAnsweredConnection() {
        peerAnswered = true
    }

    /// The peer's settings: how many requests it takes at once (re-read on every SETTINGS).
    mutating func peerSettings(maxConcurrent: UInt32, into actions: inout [Action]) {
        peerLimit = maxConcurrent
        pump(into: &actions)
    }

    /// The peer's GOAWAY: what it will still answer is answered, the rest comes back refused.
    /// A GOAWAY before any stream was answered is how APNs turns away a certificate it will not
    /// take (`BadCertificate`): it is kept, and unless a stream is answered after it, the close that
    /// follows is a refused connect (``ConnectionRefusal``) rather than a lost connection.
    ///
    /// Only a GOAWAY that names a certificate reason, or comes within `connectTimeout` of the
    /// connection being made, counts so: a provider closing a connection that sat idle with
    /// nothing asked (hours later) is saying goodbye, not refusing us.
    mutating func goAwayReceived(_ description: String, at time: Time, into actions: inout [Action]) {
        if phase == .ready || phase == .connecting { phase = .draining }
        let early = time.now &- connectedAt <= nanoseconds(configuration.connectTimeout)
        let namesCertificate = ConnectionRefusal.certificateGoAwayReasons.contains { description.contains($0) }
        if !streamAnswered && (early || namesCertificate) {
            goAwayBeforeAnswer = description
        } else {
            actions.append(.report(.goAway(description)))
        }
    }

    /// The peer will close the connection after what is in flight (HTTP/1.1 `Connection: close`):
    /// nothing more goes on it, and the next connection is made when it has closed.
    mutating func peerClosing() {
        if phase == .ready || phase == .connecting { phase = .draining }
    }

    /// The connection closed: what was in flight got no answer and is retried (or FAILED), and
    /// the next connection is made when work waits.
    mutating func closed(error: (any Error)?, at time: Time, into actions: inout [Action]) {
        let wasConnected = isConnected
        let refusal: ConnectionRefusal? =
            !wasConnected
            ? nil
            : goAwayBeforeAnswer.map { ConnectionRefusal(cause: .goAway($0)) }
                ?? (peerAnswered ? nil : ConnectionRefusal.reading(error) ?? ConnectionRefusal(cause: .closed(error)))
        goAwayBeforeAnswer = nil
        phase = .idle
        handshakeDeadline = nil
        nextLivenessCheck = nil
        pingSentAt = nil
        let lost = streams.open.sorted { $0.id < $1.id }.compactMap { inFlight[$0.slot].take() }
        streams.removeAll()
        let lostReason = refusal.map { "ProviderUnreachable: \($0)" } ?? "ConnectionLost"
        for entry in lost {
            retryOrFail(entry.request, reason: lostReason, httpStatus: 0, at: time, into: &actions)
        }
        guard wasConnected else {
            connectFailed(
                error ?? TransportError("the connection closed during the TLS handshake"), at: time, into: &actions)
            return
        }
        if let refusal {
            // Ended right after the handshake: a failed connect, with its backoff, not a lost
            // connection redialled at once (which, refused every time, was a reconnect storm).
            connectFailed(refusal, at: time, into: &actions)
            return
        }
        // A connection that served: the connect backoff starts afresh.
        connectFailures = 0
        certificateRefusal = nil
        if let error { actions.append(.report(.closed(error))) }
        // The next connection is made on the next turn, not inside the close.
        if !queue.isEmpty && !isShutDown { reconnectAt = time.now }
    }

    // MARK: Answers

    /// Request `id` ended. Its entry (request, submit time, credential generation) is handed
    /// back for the driver to read the answer with; then ``answered`` or ``unanswered``.
    mutating func takeInFlight(_ id: Int32) -> (slot: Int, entry: InFlight)? {
        guard let slot = streams.close(id), let entry = inFlight[slot].take() else { return nil }
        return (slot, entry)
    }

    /// A complete answer, as the dialect reads it.
    /// The entry and outcome are consumed, and their request and strings moved on: a copy of
    /// either is a retain and a release per reference it holds.
    mutating func answered(
        _ entry: consuming InFlight, _ outcome: consuming ProviderOutcome, at time: Time, into actions: inout [Action]
    ) {
        lastProgressAt = time.now
        // An answer proves the connection: a GOAWAY before it was the graceful kind after all.
        peerAnswered = true
        streamAnswered = true
        if let goAway = goAwayBeforeAnswer {
            goAwayBeforeAnswer = nil
            actions.append(.report(.goAway(goAway)))
        }
        let generation = entry.generation
        let request = (consume entry).request
        switch consume outcome {
        case .delivered(let id, let canonicalToken, let httpStatus):
            let result = request.result(.delivered, httpStatus: httpStatus, id: id, canonicalToken: canonicalToken)
            actions.append(.finish(consume request, result))
        case .rejected(let reason, let httpStatus, let unregisteredAt, let invalidatesToken):
            let result = request.result(
                .rejected, httpStatus: httpStatus, reason: reason, unregisteredAt: unregisteredAt,
                invalidatesToken: invalidatesToken)
            actions.append(.finish(consume request, result))
        case .transient(let reason, let httpStatus, .afterBackoff(let notBefore)):
            retryOrFail(request, reason: reason, httpStatus: httpStatus, notBefore: notBefore, at: time, into: &actions)
        case .transient(let reason, let httpStatus, .onNewConnection):
            retryOrFail(request, reason: reason, httpStatus: httpStatus, at: time, into: &actions)
            if phase == .ready {
                // Shutdown / IdleTimeout: this connection is going away; stop using it.
                phase = .draining
                actions.append(.goAway)
            }
        case .transient(let reason, let httpStatus, .afterRenewingAuthorization):
            // Every request that saw this credential refused reports it; the dialect renews once.
            if generation != 0 { actions.append(.renewAuthorization(generation: generation)) }
            guard !request.authorizationRenewed, !isShutDown, !request.job.collector.isFinished else {
                actions.append(.finish(request, request.result(.rejected, httpStatus: httpStatus, reason: reason)))
                return
            }
            var again = request
            again.authorizationRenewed = true
            queue.append(again)
        }
        pump(into: &actions)
    }

    /// Ended without an answer: `refused` (never processed: REFUSED_STREAM, or above a GOAWAY's
    /// last stream id) goes again without counting an attempt; anything else (a reset) is a
    /// failed attempt.
    mutating func unanswered(
        _ entry: InFlight, refused: Bool, reason: @autoclosure () -> String, at time: Time,
        into actions: inout [Action]
    ) {
        if refused {
            var request = entry.request
            request.attempts -= 1
            resendRefused(request, at: time, into: &actions)
        } else {
            retryOrFail(entry.request, reason: reason(), httpStatus: 0, at: time, into: &actions)
        }
        pump(into: &actions)
    }

    private mutating func retryOrFail(
        _ request: ProviderRequest, reason: String, httpStatus: Int, notBefore: Duration? = nil, at time: Time,
        into actions: inout [Action]
    ) {
        let policy = configuration.retry
        let expired = request.job.expiration.map { $0 > 0 && time.unixSeconds >= $0 } ?? false
        let tooLate = notBefore.map { $0 > policy.maxRetryAfter } ?? false
        guard request.attempts < policy.maxAttempts, !expired, !tooLate, !request.job.collector.isFinished,
            !isShutDown
        else {
            let why = isShutDown ? "Shutdown" : expired ? "Expired" : reason
            actions.append(.finish(request, request.result(.failed, httpStatus: httpStatus, reason: why)))
            return
        }
        var delay = policy.backoff(afterAttempt: request.attempts, unit: unitRandom())
        if let notBefore, notBefore > delay { delay = notBefore }
        delayed.insert(request, due: time.now &+ nanoseconds(delay))
    }

    /// A request the provider never processed: at once the first time (a GOAWAY racing it is
    /// ordinary), after the retry backoff later on, and FAILED `StreamRefused` past the policy's
    /// bound. Reported once per connection: a provider that refuses everything would otherwise be
    /// sent the same request thousands of times a second.
    private mutating func resendRefused(_ request: ProviderRequest, at time: Time, into actions: inout [Action]) {
        var request = request
        request.refusals += 1
        if request.refusals == 1 {
            queue.prepend(request)
            return
        }
        if !reportedRefusals {
            reportedRefusals = true
            actions.append(.report(.refusing(times: Int(request.refusals))))
        }
        let policy = configuration.retry
        guard Int(request.refusals) <= policy.maxRefusals, !request.job.collector.isFinished, !isShutDown else {
            let reason =
                isShutDown
                ? "Shutdown"
                : "StreamRefused: the provider refused the stream \(request.refusals) times without processing it"
            if !isShutDown { actions.append(.report(.refusedTooOften)) }
            actions.append(.finish(request, request.result(.failed, reason: reason)))
            return
        }
        let delay = policy.backoff(afterAttempt: Int(request.refusals) - 1, unit: unitRandom())
        delayed.insert(request, due: time.now &+ nanoseconds(delay))
    }

    // MARK: Time

    /// Deadlines due at `time`: the handshake's, the reconnect, due retries, and liveness (with
    /// `lastReceivedAt`, when the connection last received any byte).
    mutating func tick(at time: Time, lastReceivedAt: UInt64, into actions: inout [Action]) {
        if phase == .connecting, let deadline = handshakeDeadline, time.now >= deadline {
            handshakeDeadline = nil
            actions.append(.close(TransportError("the TLS handshake did not finish in time")))
        }
        if let at = reconnectAt, time.now >= at { reconnectAt = nil }
        var requeued = false
        while let request = delayed.popDue(now: time.now) {
            if isShutDown {
                actions.append(.finish(request, request.result(.failed, reason: "Shutdown")))
            } else {
                queue.append(request)
                requeued = true
            }
        }
        if isConnected, let check = nextLivenessCheck, time.now >= check {
            nextLivenessCheck = time.now &+ nanoseconds(livenessTick)
            checkLiveness(at: time.now, lastReceivedAt: lastReceivedAt, into: &actions)
        }
        if requeued || phase == .idle || phase == .ready { pump(into: &actions) }
    }

    private var livenessTick: Duration { min(configuration.pingTimeout, configuration.pingInterval) }

    /// PING after `pingInterval` of silence (`pingTimeout` while requests wait for answers); no
    /// bytes at all within `pingTimeout` of a PING: the connection is dead. Alive but no answer
    /// for `stallTimeout` while requests wait (no settings, 0 streams allowed, a zero window): the
    /// connection is given up. Either way its requests go to the next connection.
    private mutating func checkLiveness(at now: UInt64, lastReceivedAt: UInt64, into actions: inout [Action]) {
        if lastProgressAt == 0 || streams.isEmpty && queue.isEmpty {
            // Nothing waits, so there is nothing to make progress on: the watch starts now.
            lastProgressAt = now
        } else if now &- lastProgressAt >= nanoseconds(configuration.stallTimeout) {
            let why =
                peerLimit == nil
                ? "no SETTINGS from the provider"
                : peerLimit == 0
                    ? "the provider allows 0 streams"
                    : "no answer on any stream"
            actions.append(.report(.stalled(why)))
            giveUp("no progress for \(configuration.stallTimeout) (\(why)): connection given up", into: &actions)
            return
        }
        guard pings else {
            // HTTP/1.1: no PING. Idle for the ping interval: closed, and opened again on demand.
            if streams.isEmpty && queue.isEmpty && now &- lastReceivedAt >= nanoseconds(configuration.pingInterval) {
                phase = .draining
                nextLivenessCheck = nil
                actions.append(.closeGracefully)
            }
            return
        }
        if let sent = pingSentAt {
            if lastReceivedAt >= sent {
                pingSentAt = nil
            } else if now &- sent >= nanoseconds(configuration.pingTimeout) {
                actions.append(.report(.pingTimeout))
                giveUp("no answer to PING: connection presumed dead", into: &actions)
            }
            return
        }
        let quiet = streams.isEmpty ? configuration.pingInterval : configuration.pingTimeout
        if now &- lastReceivedAt >= nanoseconds(quiet) {
            pingSentAt = now
            actions.append(.ping)
        }
    }

    /// Closes a connection that is of no more use; nothing more goes on it or is checked on it.
    private mutating func giveUp(_ why: String, into actions: inout [Action]) {
        phase = .draining
        nextLivenessCheck = nil
        actions.append(.close(TransportError(why)))
    }

    private mutating func unitRandom() -> Double { Double(random.next() >> 11) * 0x1p-53 }
}
