import PushCore
import PushHTTP2
import PushPosix
import PushTLS
import PushTransport
import Synchronization

/// One long-lived HTTP/2 connection to a provider (APNs, FCM) and its queue of requests; the
/// dialect writes the requests and reads the answers.
///
/// Requests are multiplexed up to the server's current SETTINGS_MAX_CONCURRENT_STREAMS (re-read on
/// every SETTINGS; APNs starts at 1 until it has seen a valid token), the rest wait in the queue.
/// After a GOAWAY, or when the connection dies, the same object reconnects and goes on with its
/// queue: streams the server never processed (refused, above the GOAWAY's last stream id) are sent
/// again without counting an attempt.
///
/// Confined to `loop` (hence `@unchecked Sendable`): the client hands work over with `loop.execute`.
final class ProviderConnection<Dialect: ProviderDialect>: HTTP2SessionDelegate, HTTP2TransportOwner,
    AuthorizationWaiter, @unchecked Sendable
{
    typealias Request = ProviderRequest

    private enum State {
        case idle, connecting, ready, draining
    }

    let loop: EventLoop
    private let app: ProviderAppContext<Dialect>
    private var state = State.idle
    private var transport: HTTP2Transport?
    private var settingsReceived = false
    private var queue = RequestQueue<Request>()
    /// The open streams: a slot each, and per slot the request sent on it and its answer so far.
    /// Two arrays rather than one of a generic struct: headers and data touch only `answers`.
    private var streams = StreamSlots()
    private var requests: [Request?] = []
    private var answers: [StreamAnswer] = []
    private var connectFailures = 0
    private var reconnectTimer: TimerID?
    private var handshakeTimer: TimerID?
    /// Set by ``shutdown()``: final.
    private var isShutDown = false
    /// "the provider refuses streams" was logged for this connection.
    private var loggedRefusals = false
    /// When the connection last made progress (ready, an answer): the stall watch compares it.
    private var lastProgressAt: UInt64 = 0
    private var watchdog: TimerID?
    private var pingSentAt: UInt64?
    /// The `authorization` value in use, as bytes; re-encoded only when its generation changes.
    private var authorization: (value: [UInt8], generation: Int64)?
    /// Waiting for the dialect to call back with a credential: nothing is submitted meanwhile.
    private var awaitingAuthorization = false
    /// A ``pump()`` is due at the end of this turn.
    private var pumpScheduled = false
    /// Where the fields of the response header block being received go (one block at a time:
    /// HTTP/2 does not interleave header blocks).
    private let responseHead: ResponseHead
    /// Per-token bytes the dialect builds (e.g. a `:path`), reused: no allocation per token.
    private var scratch: [UInt8] = []
    private var random = SystemRandomNumberGenerator()
    /// The most streams ever open at once on this connection (tests check it against the limit).
    private(set) var peakInFlight = 0
    /// For gauges read from other threads: whether the connection is open (ready or draining), and
    /// the streams open (published after each change; a plain store on the loop thread).
    let isOpen = Atomic<Bool>(false)
    let streamsInFlight = Atomic<Int>(0)

    init(loop: EventLoop, app: ProviderAppContext<Dialect>) {
        self.loop = loop
        self.app = app
        responseHead = ResponseHead(idHeader: app.dialect.idHeader)
    }

    // MARK: Work from the client

    func enqueue(_ requests: [Request]) {
        guard !isShutDown else {
            for request in requests { finish(request, request.result(.failed, reason: "Shutdown")) }
            return
        }
        queue.append(contentsOf: requests)
        pump()
    }

    /// Final: what is queued fails (`Shutdown`), streams in flight fail when the connection closes
    /// (not retried), later work fails at once, and nothing reconnects.
    func shutdown() {
        isShutDown = true
        for request in queue.removeAll() {
            finish(request, request.result(.failed, reason: "Shutdown"))
        }
        if let reconnectTimer { loop.cancelTimer(reconnectTimer) }
        reconnectTimer = nil
        transport?.close(flushFirst: true)
    }

    // MARK: Sending

    private func pump() {
        guard !isShutDown else { return }
        switch state {
        case .idle:
            if !queue.isEmpty && reconnectTimer == nil { connect() }
            return
        case .connecting, .draining:
            return
        case .ready:
            break
        }
        guard let transport, settingsReceived, !queue.isEmpty, !awaitingAuthorization else { return }
        let limit = Int(min(transport.session.remoteMaxConcurrentStreams, app.configuration.maxConcurrentStreams))
        guard streams.count < limit, refreshAuthorization() else { return }
        var submitted = false
        let now = loop.now
        let generation = authorization?.generation ?? 0
        while streams.count < limit, var request = queue.popFirst() {
            if request.job.collector.isFinished {
                // The Send was answered (its deadline passed): its result is already FAILED.
                app.release(1)
                continue
            }
            request.attempts += 1
            // The client made every job of this connection with the dialect's makeJob.
            let job = unsafeDowncast(request.job as AnyObject, to: Dialect.Job.self)
            switch app.dialect.submit(
                request, job: job, authorization: authorization?.value, on: transport.session, scratch: &scratch)
            {
            case .success(let streamID):
                let answer = StreamAnswer(submittedAt: now, generation: generation)
                let (slot, isNew) = streams.open(streamID)
                if isNew {
                    requests.append(request)
                    answers.append(answer)
                } else {
                    requests[slot] = request
                    answers[slot] = answer
                }
                submitted = true
            case .failure(let error):
                request.attempts -= 1
                queue.prepend(request)
                transport.close(flushFirst: false, error: error)
                return
            }
        }
        peakInFlight = max(peakInFlight, streams.count)
        streamsInFlight.store(streams.count, ordering: .relaxed)
        if submitted { transport.setNeedsFlush() }
    }

    /// Runs ``pump()`` at the end of this loop turn (once however often it is asked for), before
    /// the transport's flush, so what it submits goes out in the same write.
    private func setNeedsPump() {
        guard !pumpScheduled else { return }
        pumpScheduled = true
        loop.executeAtEndOfTurn { [self] in
            pumpScheduled = false
            pump()
        }
    }

    /// Makes sure ``authorization`` holds the dialect's current credential (once per pump pass:
    /// a credential lasts many minutes). False when nothing can be submitted now: the credential is
    /// being fetched (the pump resumes when it arrives), or cannot be had (what waits is FAILED).
    private func refreshAuthorization() -> Bool {
        switch app.dialect.authorization(for: self) {
        case .none:
            authorization = nil
            return true
        case .credential(let value, let generation):
            if authorization?.generation != generation {
                authorization = (Array(value.utf8), generation)
            }
            return true
        case .pending:
            awaitingAuthorization = true
            return false
        case .failed(let reason):
            for request in queue.removeAll() {
                finish(request, request.result(.failed, reason: reason))
            }
            return false
        }
    }

    /// The dialect has a credential, or gave up fetching one: submit again. Any thread.
    func authorizationDidChange() {
        loop.execute { [self] in
            awaitingAuthorization = false
            pump()
        }
    }

    // MARK: Connecting

    private func connect() {
        state = .connecting
        settingsReceived = false
        let tls: TLSConnection
        let transport: HTTP2Transport
        do {
            tls = try TLSConnection(context: app.tlsContext, serverName: app.endpoint.host)
            transport = try HTTP2Transport(
                loop: loop, tls: tls, role: .client, settings: .clientDefaults, sessionDelegate: self, owner: self)
        } catch {
            connectFailed(error)
            return
        }
        self.transport = transport
        transport.connect(host: app.endpoint.host, port: app.endpoint.port, timeout: app.configuration.connectTimeout) {
            [self] result in
            if case .failure(let error) = result, self.transport === transport {
                self.transport = nil
                connectFailed(error)
            }
        }
        // connectTimeout covers the TLS handshake too: a peer that accepts TCP and then stalls
        // must not hold the queue.
        handshakeTimer = loop.schedule(after: app.configuration.connectTimeout) { [self] in
            handshakeTimer = nil
            guard self.transport === transport, state == .connecting else { return }
            transport.close(flushFirst: false, error: TransportError("the TLS handshake did not finish in time"))
        }
    }

    private func cancelHandshakeTimer() {
        if let handshakeTimer { loop.cancelTimer(handshakeTimer) }
        handshakeTimer = nil
    }

    private func connectFailed(_ error: any Error) {
        state = .idle
        connectFailures += 1
        app.log("connection failed", error)
        if connectFailures >= app.configuration.maxConnectAttempts {
            // The provider is unreachable: fail what waits rather than hold it without end.
            connectFailures = 0
            for request in queue.removeAll() {
                finish(request, request.result(.failed, reason: "ProviderUnreachable: \(error)"))
            }
            return
        }
        guard !isShutDown else { return }
        scheduleReconnect(after: app.configuration.retry.backoff(afterAttempt: connectFailures, unit: unitRandom()))
    }

    private func scheduleReconnect(after delay: Duration) {
        guard reconnectTimer == nil else { return }
        reconnectTimer = loop.schedule(after: delay) { [self] in
            reconnectTimer = nil
            pump()
        }
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTP2Transport) {
        guard transport === self.transport else { return }
        cancelHandshakeTimer()
        state = .ready
        isOpen.store(true, ordering: .relaxed)
        startWatchdog()
        pump()
    }

    func transport(_ transport: HTTP2Transport, didCloseWith error: (any Error)?) {
        guard transport === self.transport else { return }
        cancelHandshakeTimer()
        self.transport = nil
        stopWatchdog()
        let wasReady = state == .ready || state == .draining
        state = .idle
        // Streams still open got no answer: the connection died under them.
        let lost = streams.open.sorted { $0.id < $1.id }.compactMap { requests[$0.slot].take() }
        streams.removeAll()
        isOpen.store(false, ordering: .relaxed)
        streamsInFlight.store(0, ordering: .relaxed)
        for request in lost {
            retryOrFail(request, reason: "ConnectionLost", httpStatus: 0)
        }
        if !wasReady {
            connectFailed(error ?? TransportError("the connection closed during the TLS handshake"))
            return
        }
        connectFailures = 0
        if error != nil { app.log("connection closed", error) }
        if !queue.isEmpty { scheduleReconnect(after: .zero) }
    }

    // MARK: HTTP/2 events

    func http2SessionDidReceiveSettings(_ session: HTTP2Session) {
        settingsReceived = true
        pump()
    }

    /// Response header blocks of our streams are read field by field into ``responseHead``.
    func http2Session(_ session: HTTP2Session, headerFieldSinkForStream streamID: Int32) -> (any HTTP2HeaderFieldSink)? {
        guard streams.slot(of: streamID) != nil else { return nil }
        responseHead.reset()
        return responseHead
    }

    func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        guard let slot = streams.slot(of: streamID) else { return }
        if headers.isEmpty {
            // Read through responseHead (a block has no fields only if it came that way).
            let head = responseHead
            if head.status != 0 { answers[slot].response.status = head.status }
            if let id = head.id { answers[slot].response.id = id }
            if let retryAfter = head.retryAfter { answers[slot].response.retryAfter = retryAfter }
            return
        }
        let idHeader = app.dialect.idHeader
        for header in headers {
            if header.name == ResponseHeaderName.status {
                answers[slot].response.status = Self.decimal(header.value)
            } else if let idHeader, header.name == idHeader {
                answers[slot].response.id = header.valueString
            } else if header.name == ResponseHeaderName.retryAfter {
                answers[slot].response.retryAfter = header.valueString
            }
        }
    }

    func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        if data.count > 0, let slot = streams.slot(of: streamID) { answers[slot].response.append(data) }
    }

    func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let slot = streams.close(streamID), var request = requests[slot].take() else { return }
        // Moved out, not copied: the slot is left empty for its next stream.
        var done = StreamAnswer()
        swap(&done, &answers[slot])
        streamsInFlight.store(streams.count, ordering: .relaxed)
        if done.response.status == 0 {
            if errorCode == .refusedStream {
                // Never processed (refused, or above a GOAWAY's last stream id): send again, same attempt.
                request.attempts -= 1
                resendRefused(request)
            } else {
                retryOrFail(request, reason: "StreamReset(\(errorCode))", httpStatus: 0)
            }
        } else {
            lastProgressAt = loop.now
            app.requestSeconds?.observe(nanoseconds: loop.now &- done.submittedAt)
            let outcome = app.dialect.outcome(of: done.response, token: request.token, now: app.clock())
            handle(outcome, for: request, generation: done.generation)
        }
        // Once per turn, not once per answer: a read of many answers refills the streams in one pass.
        setNeedsPump()
    }

    func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {
        // Finish the streams at or below lastStreamID here; nghttp2 refuses the others, which are
        // then resent on the next connection. The transport closes once the session is done.
        state = .draining
        app.log("GOAWAY", TransportError("\(errorCode) \(String(decoding: debugData, as: UTF8.self))"))
    }

    // MARK: Outcomes

    private func handle(_ outcome: ProviderOutcome, for request: Request, generation: Int64) {
        switch outcome {
        case .delivered(let id, let canonicalToken):
            finish(request, request.result(.delivered, httpStatus: 200, id: id, canonicalToken: canonicalToken))
        case .rejected(let reason, let httpStatus, let unregisteredAt, let invalidatesToken):
            finish(request, request.result(
                .rejected, httpStatus: httpStatus, reason: reason, unregisteredAt: unregisteredAt,
                invalidatesToken: invalidatesToken))
        case .transient(let reason, let httpStatus, .afterBackoff(let notBefore)):
            retryOrFail(request, reason: reason, httpStatus: httpStatus, notBefore: notBefore)
        case .transient(let reason, let httpStatus, .onNewConnection):
            retryOrFail(request, reason: reason, httpStatus: httpStatus)
            if state == .ready {
                // Shutdown / IdleTimeout: this connection is going away; stop using it.
                state = .draining
                try? transport?.session.goAway(errorCode: .noError)
                transport?.setNeedsFlush()
            }
        case .transient(let reason, let httpStatus, .afterRenewingAuthorization):
            // Every request that saw this credential refused reports it; the dialect renews once.
            if generation != 0 { app.dialect.authorizationRejected(generation: generation) }
            guard !request.authorizationRenewed, !isShutDown, !request.job.collector.isFinished else {
                finish(request, request.result(.rejected, httpStatus: httpStatus, reason: reason))
                return
            }
            var again = request
            again.authorizationRenewed = true
            enqueue([again])
        }
    }

    private func retryOrFail(_ request: Request, reason: String, httpStatus: Int, notBefore: Duration? = nil) {
        let policy = app.configuration.retry
        let expired = request.job.expiration.map { $0 > 0 && app.clock() >= $0 } ?? false
        let tooLate = notBefore.map { $0 > policy.maxRetryAfter } ?? false
        guard request.attempts < policy.maxAttempts, !expired, !tooLate, !request.job.collector.isFinished,
            !isShutDown
        else {
            let why = isShutDown ? "Shutdown" : expired ? "Expired" : reason
            finish(request, request.result(.failed, httpStatus: httpStatus, reason: why))
            return
        }
        var delay = policy.backoff(afterAttempt: request.attempts, unit: unitRandom())
        if let notBefore, notBefore > delay { delay = notBefore }
        loop.schedule(after: delay) { [self] in
            enqueue([request])
        }
    }

    /// A request the provider never processed: at once the first time (a GOAWAY racing it is
    /// ordinary), after the retry backoff later on, and FAILED `StreamRefused` past the policy's
    /// bound. Logged once per connection: a provider that refuses everything would otherwise be
    /// sent the same request thousands of times a second.
    private func resendRefused(_ request: Request) {
        var request = request
        request.refusals += 1
        let policy = app.configuration.retry
        if request.refusals == 1 {
            queue.prepend(request)
            return
        }
        if !loggedRefusals {
            loggedRefusals = true
            app.log("the provider refuses streams without processing them; resending with backoff",
                TransportError("REFUSED_STREAM \(request.refusals) times for one request"))
        }
        guard Int(request.refusals) <= policy.maxRefusals, !request.job.collector.isFinished, !isShutDown else {
            finish(
                request,
                request.result(
                    .failed, reason: isShutDown ? "Shutdown" : "StreamRefused: the provider refused the stream "
                        + "\(request.refusals) times without processing it"))
            return
        }
        let delay = policy.backoff(afterAttempt: Int(request.refusals) - 1, unit: unitRandom())
        loop.schedule(after: delay) { [self] in
            enqueue([request])
        }
    }

    private func finish(_ request: Request, _ result: DeliveryResult) {
        // Room first: whoever awaits the result may send again at once.
        app.release(1)
        request.job.collector.complete(slot: request.slot, with: result)
    }

    // MARK: Liveness

    private func startWatchdog() {
        stopWatchdog()
        lastProgressAt = 0  // a new connection: the stall watch starts afresh
        scheduleWatchdogTick()
    }

    private func scheduleWatchdogTick() {
        let tick = min(app.configuration.pingTimeout, app.configuration.pingInterval)
        watchdog = loop.schedule(after: tick) { [self] in
            watchdog = nil
            checkLiveness()
            if transport != nil { scheduleWatchdogTick() }
        }
    }

    private func stopWatchdog() {
        if let watchdog { loop.cancelTimer(watchdog) }
        watchdog = nil
        pingSentAt = nil
    }

    /// PING after `pingInterval` of silence (`pingTimeout` while streams wait for answers); no bytes
    /// at all within `pingTimeout` of a PING means the connection is dead: close it, retry its
    /// streams, reconnect.
    private func checkLiveness() {
        guard let transport, state == .ready || state == .draining else { return }
        let now = loop.now
        if lastProgressAt == 0 || streams.isEmpty && queue.isEmpty {
            // Nothing waits, so there is nothing to make progress on: the watch starts now.
            lastProgressAt = now
        } else if now &- lastProgressAt >= Self.nanoseconds(app.configuration.stallTimeout) {
            // Alive (it answers PINGs) but useless: no SETTINGS, 0 streams allowed, a zero window.
            let why = !settingsReceived ? "no SETTINGS from the provider"
                : transport.session.remoteMaxConcurrentStreams == 0 ? "the provider allows 0 streams"
                : "no answer on any stream"
            transport.close(
                flushFirst: false,
                error: TransportError("no progress for \(app.configuration.stallTimeout) (\(why)): connection given up"))
            return
        }
        let silence = now &- transport.lastReceivedAt
        if let pingSentAt {
            if transport.lastReceivedAt >= pingSentAt {
                self.pingSentAt = nil
            } else if now &- pingSentAt >= Self.nanoseconds(app.configuration.pingTimeout) {
                transport.close(flushFirst: false, error: TransportError("no answer to PING: connection presumed dead"))
            }
            return
        }
        let quiet = streams.isEmpty ? app.configuration.pingInterval : app.configuration.pingTimeout
        if silence >= Self.nanoseconds(quiet) {
            try? transport.session.ping()
            pingSentAt = now
            transport.setNeedsFlush()
        }
    }

    // MARK: Small things

    private func unitRandom() -> Double { Double.random(in: 0..<1, using: &random) }


    private static func decimal(_ bytes: [UInt8]) -> Int {
        var value = 0
        for byte in bytes {
            guard byte >= 0x30 && byte <= 0x39 else { return 0 }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(seconds, 0)) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000)
    }
}

/// One open stream's answer so far, and what the engine needs of its sending.
private struct StreamAnswer {
    /// `loop.now` when it was submitted.
    var submittedAt: UInt64 = 0
    /// The generation of the credential it was sent with (0: none).
    var generation: Int64 = 0
    var response = ProviderResponse()
}

/// Response headers every dialect needs read (static stored properties cannot live in a generic type).
enum ResponseHeaderName {
    static let status = Array(":status".utf8)
    static let retryAfter = Array("retry-after".utf8)
}
