import PushCore
import PushCredentials
import PushHTTP1
import PushHTTP2
import PushMetrics
import PushPosix
import PushTLS
import PushTransport
import Synchronization

/// One long-lived HTTP/2 or HTTP/1.1 connection to a provider (APNs, FCM, ADM) and its queue of
/// requests: the
/// driver around a ``ProviderConnectionMachine``, which decides everything (queue, limits, retries,
/// reconnects, liveness). This class only carries the machine's actions out on the transport and
/// the nghttp2 session, feeds it their events, and lets the dialect write requests and read answers.
///
/// Over HTTP/2, requests are multiplexed up to the server's current SETTINGS_MAX_CONCURRENT_STREAMS
/// (re-read on every SETTINGS; APNs starts at 1 until it has seen a valid token). Over HTTP/1.1
/// (the server's ALPN choice, or the app's `http_version`) one request is in flight at a time, on a
/// kept-alive connection; the app's `connections` are its parallelism. After a GOAWAY, a
/// `Connection: close`, or when the connection dies, the same object reconnects and goes on.
///
/// Confined to `loop` (hence `@unchecked Sendable`): the client hands work over with `loop.execute`.
final class ProviderConnection<Dialect: ProviderDialect>: HTTP2SessionDelegate, HTTP1ParserDelegate,
    HTTPTransportOwner, AuthorizationWaiter, @unchecked Sendable
{
    typealias Request = ProviderRequest
    private typealias Machine = ProviderConnectionMachine

    let loop: EventLoop
    private let app: ProviderAppContext<Dialect>
    /// Where this connection goes (its pool's origin), and the count its results give back to.
    private let usage: ProviderOriginUsage
    private var machine: Machine
    /// Actions the machine returned, carried out right after each event.
    private var actions: [Machine.Action] = []
    private var transport: HTTPTransport?
    /// Per slot (the machine's), the answer so far of the request in flight there.
    private var answers: [ProviderResponse] = []
    /// The machine's one timer, and the deadline it is set for.
    private var timer: TimerID?
    private var timerDeadline: UInt64?
    /// The `authorization` value in use, as bytes; re-encoded only when its generation changes.
    private var authorization: (value: [UInt8], generation: Int64)?
    /// A ``pump()`` is due at the end of this turn.
    private var pumpScheduled = false
    /// Where the fields of the response header block being received go (one block at a time:
    /// HTTP/2 does not interleave header blocks).
    private let responseHead: ResponseHead
    /// HTTP/1.1: the id of the request in flight (the machine keys requests by id), and the next.
    private var http1InFlight: Int32?
    private var nextHTTP1ID: Int32 = 1
    /// Per-token bytes the dialect builds (e.g. a `:path`), reused: no allocation per token.
    private var scratch: [UInt8] = []
    /// For gauges read from other threads: whether the connection is open (ready or draining), and
    /// the streams open (published after each change; a plain store on the loop thread).
    let isOpen = Atomic<Bool>(false)
    let streamsInFlight = Atomic<Int>(0)

    /// The most streams ever open at once on this connection (tests check it against the limit).
    var peakInFlight: Int { machine.peakInFlight }

    init(loop: EventLoop, app: ProviderAppContext<Dialect>, usage: ProviderOriginUsage) {
        self.loop = loop
        self.app = app
        self.usage = usage
        var seed = SystemRandomNumberGenerator()
        machine = Machine(configuration: app.configuration, seed: seed.next())
        responseHead = ResponseHead(idHeader: app.dialect.idHeader)
    }

    // MARK: Work from the client

    func enqueue(_ requests: [Request]) {
        machine.enqueue(requests, into: &actions)
        perform()
    }

    func enqueue(_ request: consuming Request) {
        machine.enqueue(request, into: &actions)
        perform()
    }

    /// Final: what is queued fails (`Shutdown`), streams in flight fail when the connection closes
    /// (not retried), later work fails at once, and nothing reconnects.
    func shutdown() {
        machine.shutDown(into: &actions)
        perform()
    }

    // MARK: Carrying out the machine's actions

    private var time: Machine.Time { Machine.Time(now: loop.now, unixSeconds: app.clock()) }

    private func perform() {
        while !actions.isEmpty {
            // Swapped out: an action may feed the machine again (a submit that fails).
            var batch: [Machine.Action] = []
            swap(&batch, &actions)
            // Each action moved out of the batch, from the end of it reversed: iterating would copy
            // every action and its payload, a request and a result, retained and released once more
            // each; and a payload-free placeholder left in each place was then destroyed through
            // the runtime's generic array destroy (~100 instructions a batch, callgrind). `popLast`
            // leaves nothing behind, and the emptied batch keeps its capacity.
            batch.reverse()
            while let action = batch.popLast() { perform(action) }
            if actions.isEmpty { swap(&batch, &actions) }
        }
        rearmTimer()
    }

    private func perform(_ action: consuming Machine.Action) {
        switch consume action {
        case .connect:
            connect()
        case .submit:
            setNeedsPump()
        case .finish(let request, let result):
            // Room first: whoever awaits the result may send again at once.
            usage.release(1)
            request.job.collector.complete(slot: request.slot, with: result)
        case .close(let error):
            transport?.close(flushFirst: false, error: error)
        case .closeGracefully:
            transport?.close(flushFirst: true)
        case .goAway:
            try? transport?.session.goAway(errorCode: .noError)
            transport?.setNeedsFlush()
        case .ping:
            try? transport?.session.ping()
            transport?.setNeedsFlush()
        case .renewAuthorization(let generation):
            app.dialect.authorizationRejected(generation: generation)
        case .report(let report):
            self.report(report)
        }
    }

    private func report(_ report: ProviderConnectionReport) {
        switch report {
        case .connectFailed(let error):
            app.log("connection failed", error)
        case .refused(let refusal):
            app.metrics.handshakeRefusals?(refusal.label).increment()
            let (logged, attempts) = usage.refused(
                refusal, at: loop.now, policy: app.configuration.retry,
                logInterval: app.configuration.refusalLogInterval)
            if logged {
                app.log(
                    "the provider refused the connection; reconnecting with backoff",
                    ProviderRefusedHandshake(
                        reason: refusal.description, alert: refusal.label,
                        refusesCertificate: refusal.refusesCertificate,
                        certificate: app.tlsContext.clientCertificate, attempts: attempts))
            }
        case .addressRefused(let reason, let requests):
            app.log("connection refused", TransportError(reason))
            // Counted per request refused, not per report as the other protections.
            app.metrics.protections[.privateAddressRefused]?.increment(by: requests)
            return
        case .closed(let error):
            app.log("connection closed", error)
        case .goAway(let description):
            app.log("GOAWAY", TransportError(description))
        case .refusing(let times):
            app.log(
                "the provider refuses streams without processing them; resending with backoff",
                TransportError("REFUSED_STREAM \(times) times for one request"))
        case .refusedTooOften, .stalled, .pingTimeout:
            // The close that follows a stall or a PING timeout is logged with its reason.
            break
        }
        if let protection = report.protection { app.metrics.protections[protection]?.increment() }
    }

    /// Keeps the one timer set for the machine's next deadline.
    private func rearmTimer() {
        let deadline = machine.nextDeadline
        guard deadline != timerDeadline else { return }
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        timerDeadline = deadline
        guard let deadline else { return }
        timer = loop.schedule(at: deadline) { [self] in
            timer = nil
            timerDeadline = nil
            machine.tick(at: time, lastReceivedAt: transport?.lastReceivedAt ?? 0, into: &actions)
            perform()
        }
    }

    // MARK: Sending

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

    private func pump() {
        guard let transport, machine.phase == .ready, transport.http1Session?.canSend ?? true,
            refreshAuthorization()
        else {
            perform()
            return
        }
        let time = self.time
        let generation = authorization?.generation ?? 0
        var submitted = false
        while let request = machine.nextSubmission(into: &actions) {
            // The client made every job of this connection with the dialect's makeJob.
            let job = unsafeDowncast(request.job as AnyObject, to: Dialect.Job.self)
            let wire: ProviderWire
            if let http1 = transport.http1Session {
                wire = ProviderWire(carrier: .http1(http1, id: nextHTTP1ID))
            } else {
                wire = ProviderWire(carrier: .http2(transport.session))
            }
            switch app.dialect.submit(
                request, job: job, authorization: authorization?.value, on: wire, scratch: &scratch)
            {
            case .success(let streamID):
                if transport.http1Session != nil {
                    http1InFlight = streamID
                    nextHTTP1ID &+= 2
                }
                let slot = machine.submitted(consume request, id: streamID, generation: generation, at: time)
                if slot == answers.count {
                    answers.append(ProviderResponse())
                } else {
                    answers[slot] = ProviderResponse()
                }
                submitted = true
            case .failure(let error) where error.refusesRequestOnly:
                machine.requestRefused(request, reason: error.description, into: &actions)
            case .failure(let error):
                machine.submitFailed(request, error: error, into: &actions)
            }
        }
        streamsInFlight.store(machine.inFlightCount, ordering: .relaxed)
        if submitted { transport.setNeedsFlush() }
        perform()
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
            machine.authorizationPending()
            return false
        case .failed(let reason):
            machine.authorizationFailed(reason, into: &actions)
            return false
        }
    }

    /// The dialect has a credential, or gave up fetching one: submit again. Any thread.
    func authorizationDidChange() {
        loop.execute { [self] in
            machine.authorizationChanged(into: &actions)
            perform()
        }
    }

    // MARK: Connecting

    private func connect() {
        machine.connecting(at: time)
        let tls: TLSConnection
        let transport: HTTPTransport
        do {
            tls = try TLSConnection(context: app.tlsContext, serverName: usage.origin.host)
            if app.configuration.httpVersion == .http2 {
                transport = try HTTPTransport(
                    loop: loop, tls: tls, role: .client, settings: .clientDefaults, sessionDelegate: self, owner: self)
            } else {
                transport = HTTPTransport(
                    loop: loop, tls: tls, policy: app.configuration.httpVersion, http2Settings: .clientDefaults,
                    http2Delegate: self, http1Delegate: self,
                    owner: self)
            }
        } catch {
            machine.connectFailed(error, at: time, into: &actions)
            return
        }
        self.transport = transport
        transport.connect(
            host: usage.origin.host, port: usage.origin.port, timeout: app.configuration.connectTimeout,
            proxy: app.configuration.proxy.proxy(for: usage.origin.host), admission: app.configuration.admission
        ) {
            [self] result in
            guard case .failure(let error) = result, self.transport === transport else { return }
            self.transport = nil
            if let refusal = error as? AddressRefusal {
                let reason = "the push service host \(refusal) (set allow_private_addresses to allow)"
                machine.connectRefused(reason: reason, into: &actions)
            } else {
                machine.connectFailed(error, at: time, into: &actions)
            }
            perform()
        }
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTPTransport) {
        guard transport === self.transport else { return }
        isOpen.store(true, ordering: .relaxed)
        let isHTTP1 = transport.http1Session != nil
        machine.connected(at: time, pings: !isHTTP1, into: &actions)
        if isHTTP1 {
            // One request at a time, from the start: there are no settings to wait for.
            http1InFlight = nil
            machine.peerSettings(maxConcurrent: 1, into: &actions)
        }
        perform()
    }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        guard transport === self.transport else { return }
        self.transport = nil
        isOpen.store(false, ordering: .relaxed)
        streamsInFlight.store(0, ordering: .relaxed)
        if let id = http1InFlight, let http1 = transport.http1Session {
            http1InFlight = nil
            if !http1.answerStarted && http1.answered > 0, let (slot, entry) = machine.takeInFlight(id) {
                // A kept-alive connection the server closed (as idle, say) before any byte of the
                // answer: the request was not processed; it goes again without an attempt counted.
                answers[slot] = ProviderResponse()
                machine.unanswered(entry, refused: true, reason: "", at: time, into: &actions)
            }
            // Anything else (the first request of a connection, or an answer cut off) is lost with
            // the connection: retried as an attempt.
        }
        machine.closed(error: error, at: time, into: &actions)
        perform()
    }

    // MARK: HTTP/2 events

    override func http2SessionDidReceiveSettings(_ session: HTTP2Session) {
        machine.peerAnsweredConnection()
        machine.peerSettings(maxConcurrent: session.remoteMaxConcurrentStreams, into: &actions)
        perform()
    }

    /// Response header blocks of our streams are read field by field into ``responseHead``.
    override func http2Session(
        _ session: HTTP2Session, headerFieldSinkForStream streamID: Int32
    ) -> HTTP2HeaderFieldSink? {
        guard machine.slot(of: streamID) != nil else { return nil }
        responseHead.reset()
        return responseHead
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        guard let slot = machine.slot(of: streamID) else { return }
        if headers.isEmpty {
            // Read through responseHead (a block has no fields only if it came that way).
            let head = responseHead
            if head.status != 0 { answers[slot].status = head.status }
            if let id = head.id { answers[slot].id = id }
            if let retryAfter = head.retryAfter { answers[slot].retryAfter = retryAfter }
            return
        }
        let idHeader = app.dialect.idHeader
        for header in headers {
            if header.name == ResponseHeaderName.status {
                answers[slot].status = Self.decimal(header.value)
            } else if let idHeader, header.name == idHeader {
                answers[slot].id = header.valueString
            } else if header.name == ResponseHeaderName.retryAfter {
                answers[slot].retryAfter = header.valueString
            }
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard data.count > 0, let slot = machine.slot(of: streamID), !answers[slot].truncated else { return }
        if !answers[slot].append(data) {
            // A body this large is not the provider's error JSON: stop it rather than read megabytes.
            // The answer counts with what was kept; the reset's close delivers it.
            try? session.resetStream(streamID: streamID, errorCode: .cancel)
            transport?.setNeedsFlush()
        }
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let (slot, entry) = machine.takeInFlight(streamID) else { return }
        // Moved out, not copied: the slot is left empty for its next stream.
        var response = ProviderResponse()
        swap(&response, &answers[slot])
        streamsInFlight.store(machine.inFlightCount, ordering: .relaxed)
        let time = self.time
        if response.status == 0 {
            machine.unanswered(
                entry, refused: errorCode == .refusedStream, reason: "StreamReset(\(errorCode))", at: time,
                into: &actions)
        } else {
            app.metrics.requestSeconds?.observe(nanoseconds: time.now &- entry.submittedAt)
            let outcome = app.dialect.outcome(of: response, token: entry.request.token, now: time.unixSeconds)
            machine.answered(consume entry, outcome, at: time, into: &actions)
        }
        // Once per turn, not once per answer: a read of many answers refills the streams in one pass.
        perform()
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {
        // Streams at or below lastStreamID are still answered; nghttp2 refuses the others, which
        // are then resent on the next connection. The transport closes once the session is done.
        machine.goAwayReceived(
            "\(errorCode) \(String(decoding: debugData, as: UTF8.self))", at: time, into: &actions)
        perform()
    }

    // MARK: HTTP/1.1 events

    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard let id = http1InFlight, let slot = machine.slot(of: id) else { return }
        if let idHeader = app.dialect.idHeader, Self.equalsLowercased(name, idHeader) {
            answers[slot].id = String(decoding: value, as: UTF8.self)
        } else if Self.equalsLowercased(name, ResponseHeaderName.retryAfter) {
            answers[slot].retryAfter = String(decoding: value, as: UTF8.self)
        }
    }

    func http1HeadersComplete(_ head: HTTP1Head) {
        machine.peerAnsweredConnection()
        guard let id = http1InFlight, let slot = machine.slot(of: id) else { return }
        answers[slot].status = head.status
    }

    func http1Body(_ bytes: UnsafeRawBufferPointer) {
        guard let id = http1InFlight, let slot = machine.slot(of: id) else { return }
        if !answers[slot].append(bytes) {
            // Too large to be the provider's error JSON: the answer counts with what was kept, and
            // the connection, which cannot skip the rest unread, is closed.
            http1InFlight = nil
            machine.peerClosing()
            answered(id)
            transport?.close(flushFirst: false, error: nil)
        }
    }

    func http1MessageComplete(keepAlive: Bool) {
        guard let id = http1InFlight else { return }
        http1InFlight = nil
        if !keepAlive {
            // `Connection: close`: the answer counts; the transport closes once it is read.
            machine.peerClosing()
        }
        answered(id)
    }

    // MARK: Answers

    /// Request `id` has its complete answer in its slot.
    private func answered(_ id: Int32) {
        guard let (slot, entry) = machine.takeInFlight(id) else { return }
        var response = ProviderResponse()
        swap(&response, &answers[slot])
        streamsInFlight.store(machine.inFlightCount, ordering: .relaxed)
        let time = self.time
        app.metrics.requestSeconds?.observe(nanoseconds: time.now &- entry.submittedAt)
        let outcome = app.dialect.outcome(of: response, token: entry.request.token, now: time.unixSeconds)
        machine.answered(consume entry, outcome, at: time, into: &actions)
        perform()
    }

    // MARK: Small things

    /// Whether `name` (as sent, any case) is `lowercase` (already lowercase).
    private static func equalsLowercased(_ name: UnsafeBufferPointer<UInt8>, _ lowercase: [UInt8]) -> Bool {
        guard name.count == lowercase.count else { return false }
        for index in 0..<name.count {
            var byte = name[index]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if byte != lowercase[index] { return false }
        }
        return true
    }

    private static func decimal(_ bytes: [UInt8]) -> Int {
        var value = 0
        for byte in bytes {
            guard byte >= 0x30 && byte <= 0x39 else { return 0 }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }
}

/// Response headers every dialect needs read (static stored properties cannot live in a generic type).
enum ResponseHeaderName {
    static let status = Array(":status".utf8)
    static let retryAfter = Array("retry-after".utf8)
}
