import PushCore
import PushHTTP2
import PushPosix
import PushTLS
import PushTransport

/// One client connection: the gRPC calls on the streams of an HTTP/2 server session, and the
/// Connect calls and plain routes beside them, on HTTP/2 streams that are not gRPC or over
/// HTTP/1.1 (``ConnectHTTP1Connection``): the version is the client's ALPN choice over TLS, and
/// over cleartext whether its first bytes are the HTTP/2 preface.
///
/// Confined to its connection's event loop (every entry point is a loop callback), which is why it
/// is `@unchecked Sendable`.
final class GRPCServerConnection: HTTP2SessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    let loop: EventLoop
    private(set) var transport: HTTPTransport!
    var session: HTTP2Session { transport.session }
    let router: GRPCRouter
    let routes: HTTPRoutes
    let configuration: GRPCServerConfiguration
    /// The configuration's call observer, which every call of the connection tells how it ended.
    let callObserver: (any GRPCCallObserver)?
    let peer: String
    let isLoopbackPeer: Bool
    /// The connection's TLS session (nil for h2c); the transport drives it, this reads the peer.
    var tls: TLSConnection?
    /// The verified client certificate's subject CN, read once the handshake is done (mTLS).
    var clientCertificateCommonName: String?
    private var calls = HTTP2StreamTable<GRPCServerCall>()
    /// HTTP/2 streams that are not gRPC: Connect calls and plain routes.
    var connectStreams: [Int32: ConnectHTTP2Stream] = [:]
    /// Set when the client chose HTTP/1.1.
    private var http1: ConnectHTTP1Connection?
    private let registry: GRPCConnectionRegistry
    /// The timers hold the connection strongly, not weakly: a weak reference would give it a
    /// side table, sending every retain and release of it (several per call) the slow way. Each is
    /// cancelled when the transport closes, which lets the connection go.
    private var idleTimer: TimerID?
    /// Calls that keep the connection from being idle: those a method's admission let in.
    private var busyCalls = 0
    private var shuttingDown = false
    var requestIDs = GRPCRequestID()
    /// Every header block of the connection's streams goes here as it is decoded.
    let headReader = GRPCRequestHeadReader()
    /// Request bytes this connection's calls hold (drawing on the server's budget).
    let requestBudget: GRPCRequestBudget
    /// When to give up on the client (unread answers, control-frame floods), and its write timer.
    private var watch: GRPCClientWatch
    private var writeTimer: TimerID?
    /// Calls whose request must be complete within `requestTimeout`, oldest first, and one timer
    /// for them all, set for the oldest (a timer, its closure and its cancelling per call cost
    /// about a thousand instructions of every unary call). Every call of a connection has the same
    /// limit, so deadlines come in the order the calls began; a call leaves the moment its request
    /// is complete or it ends, which is why the queue is linked through the calls themselves.
    private var requestDeadlines = DeadlineQueue<GRPCServerCall.RequestLinkage>()
    private var requestTimer: TimerID?
    /// The last limit asked for, in nanoseconds (converted once, not per call).
    private var requestTimeLimit: (limit: Duration, nanoseconds: UInt64) = (.zero, 0)
    /// The client was dropped: its calls are detached, not cancelled.
    private var abandoned = false
    /// The highest stream whose request reached its handler: a GOAWAY that drops the client names
    /// it, so the streams above it were certainly not processed and may be retried elsewhere.
    var highestWorkingStreamID: Int32 = 0
    /// The highest stream whose request headers began a call or a Connect stream.
    private var lastBegunStreamID: Int32 = 0

    /// Serves `connection`; the returned transport is its handler. Over the connection limit (or
    /// during shutdown) the connection is closed at once.
    static func serve(
        _ connection: Connection, router: GRPCRouter, routes: HTTPRoutes, configuration: GRPCServerConfiguration,
        registry: GRPCConnectionRegistry
    ) throws -> HTTPTransport {
        let server = GRPCServerConnection(
            connection: connection, router: router, routes: routes, configuration: configuration, registry: registry)
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = configuration.maxConcurrentStreams
        settings.maxHeaderListSize = configuration.maxHeaderListSize
        // Request bytes go back to a stream's window only once its handler can take more.
        settings.manualFlowControl = true
        settings.noRFC7540Priorities = true
        let tls = try configuration.tls.map { context throws(TLSError) in try TLSConnection(context: context) }
        server.tls = tls
        let transport = HTTPTransport(loop: connection.loop, tls: tls, owner: server) {
            [unowned server] _, version in
            switch version {
            case .http2:
                return .http2(settings, delegate: server)
            case .http1:
                let http1 = ConnectHTTP1Connection(server: server)
                server.http1 = http1
                return .http1(http1.session)
            }
        }
        transport.outputHighWaterMark = configuration.outputHighWaterMark
        // Registered last: nothing after this can fail, so a slot is never left behind.
        guard registry.register(server) else {
            throw TransportError("connection limit (\(registry.maxConnections)) reached or shutting down")
        }
        server.transport = transport
        transport.attach(connection)
        server.armIdleTimer()
        return transport
    }

    private init(
        connection: Connection, router: GRPCRouter, routes: HTTPRoutes, configuration: GRPCServerConfiguration,
        registry: GRPCConnectionRegistry
    ) {
        self.registry = registry
        self.loop = connection.loop
        self.router = router
        self.routes = routes
        self.configuration = configuration
        self.peer = connection.remoteAddress
        self.isLoopbackPeer = connection.isLoopbackPeer
        self.callObserver = configuration.callObserver
        self.watch = GRPCClientWatch(
            maxUnsentBytes: configuration.maxUnsentResponseBytes,
            writeTimeout: configuration.writeTimeout,
            maxControlFramesPerSecond: configuration.maxControlFramesPerSecond, now: connection.loop.now)
        self.requestBudget = GRPCRequestBudget(
            limit: configuration.maxBufferedRequestBytesPerConnection, owner: "this connection",
            parent: registry.requestBudget)
    }

    /// Calls whose handler waits for the client to take their response bytes.
    private var drainWaiters: [GRPCServerCall] = []
    private var connectDrainWaiters: [ConnectCall] = []

    /// `call`'s handler waits for its output to drain: looked at again after each flush.
    func waitForDrain(_ call: GRPCServerCall) {
        watchFlushes()
        drainWaiters.append(call)
    }

    func waitForDrain(_ call: ConnectCall) {
        watchFlushes()
        connectDrainWaiters.append(call)
    }

    private func watchFlushes() {
        if drainWaiters.isEmpty && connectDrainWaiters.isEmpty {
            transport.onFlushed = { [unowned self] in outputFlushed() }
        }
    }

    private func outputFlushed() {
        drainWaiters.removeAll { !$0.outputFlushed() }
        connectDrainWaiters.removeAll { !$0.outputFlushed() }
        if drainWaiters.isEmpty && connectDrainWaiters.isEmpty { transport.onFlushed = nil }
    }

    /// The client as its calls see it.
    var peerInfo: ConnectPeer {
        ConnectPeer(
            address: peer, isLoopback: isLoopbackPeer, isTLS: tls != nil,
            clientCertificateCommonName: clientCertificateCommonName)
    }

    /// Frames submitted outside a socket event go out at the end of the loop turn.
    func flush() {
        transport.setNeedsFlush()
    }

    // MARK: Protection

    /// A call queued response bytes (see ``GRPCClientWatch``).
    func responseQueued() {
        guard let transport, !transport.isClosed else { return }
        perform(watch.responseQueued(unsent: transport.unsentBytes, progress: transport.outputProgress))
    }

    /// Counts a frame without headers or body bytes (see ``GRPCClientWatch``).
    override func http2SessionDidReceiveControlFrame(_ session: HTTP2Session) {
        perform(watch.controlFrame(now: loop.now))
    }

    private func perform(_ action: GRPCClientWatch.Action) {
        switch action {
        case .none:
            break
        case .armWriteTimer(let delay):
            writeTimer = loop.schedule(after: delay) { [self] in
                guard let transport = self.transport else { return }
                writeTimer = nil
                guard !transport.isClosed else { return }
                perform(watch.writeTimerFired(unsent: transport.unsentBytes, progress: transport.outputProgress))
            }
        case .drop(let reason):
            drop(reason)
        }
    }

    /// GOAWAY (ENHANCE_YOUR_CALM) and close, logged and counted. The client's calls end without an
    /// answer but their work goes on (``GRPCServerCall/cancel(detached:)``).
    private func drop(_ reason: GRPCClientWatch.Reason) {
        abandoned = true
        let goAwayText: String
        let why: String
        switch reason {
        case .unsentOverLimit(let unsent):
            why = "over max_unsent_response_bytes (\(configuration.maxUnsentResponseBytes) bytes)"
            goAwayText = "client does not read its responses"
            configuration.callObserver?.serverEvent(.unreadClientClosed(peer: peer, unsentBytes: unsent, reason: why))
        case .noProgress(let unsent):
            why = "took no response bytes for write_timeout (\(configuration.writeTimeout ?? .zero))"
            goAwayText = "client does not read its responses"
            configuration.callObserver?.serverEvent(.unreadClientClosed(peer: peer, unsentBytes: unsent, reason: why))
        case .controlFrameFlood(let frames):
            why = "\(frames) control frames within a second"
            goAwayText = "too many control frames"
            configuration.callObserver?.serverEvent(.controlFrameFlood(peer: peer, frames: frames))
        }
        if transport.version == .http2 {
            try? session.goAway(
                errorCode: .enhanceYourCalm, lastStreamID: highestWorkingStreamID, debugData: Array(goAwayText.utf8))
        }
        // One attempt to send the GOAWAY; whatever the client does not take is dropped with it.
        transport.flushAndClose(error: TransportError("client closed: \(why)"))
    }

    /// `call`'s handler took a request message: its work may begin.
    func workBegan(_ call: GRPCServerCall) {
        highestWorkingStreamID = max(highestWorkingStreamID, call.streamID)
    }

    /// `call`'s request must be complete within `limit` (the same for every call of the connection).
    func limitRequestTime(_ call: GRPCServerCall, _ limit: Duration) {
        if requestTimeLimit.limit != limit { requestTimeLimit = (limit, MonotonicDeadline.nanoseconds(in: limit)) }
        let (deadline, overflow) = call.startedAt.addingReportingOverflow(requestTimeLimit.nanoseconds)
        requestDeadlines.append(call, deadline: overflow ? .max : deadline)
        if requestTimer == nil { armRequestTimer(limit) }
    }

    /// `call`'s request is complete, or the call ended.
    func requestCompleted(_ call: GRPCServerCall) {
        requestDeadlines.remove(call)
    }

    /// For the oldest waiting call; when it fires, the calls past their deadline end and it is set
    /// for the next (if the oldest completed meanwhile, it fires early and is set again).
    private func armRequestTimer(_ limit: Duration) {
        guard let oldest = requestDeadlines.oldestDeadline else { return }
        requestTimer = loop.schedule(at: oldest) { [self] in
            requestTimer = nil
            var due: [GRPCServerCall] = []
            requestDeadlines.removeDue(now: loop.now, into: &due)
            for call in due { call.requestTimeExceeded(limit) }
            if requestTimer == nil { armRequestTimer(limit) }
        }
    }

    /// A call's message did not fit the request budget.
    func requestBudgetExceeded(_ call: GRPCServerCall) {
        requestBudgetExceeded(path: call.path)
    }

    func requestBudgetExceeded(path: String?) {
        configuration.callObserver?.serverEvent(.requestBudgetExceeded(peer: peer, path: path))
    }

    /// A request that is not gRPC (Connect, a route) began; `busy`: an admitted one, and the
    /// connection is in use until it ends (``ConnectDoor/Decision/keepsConnectionBusy``).
    func requestBegan(busy: Bool) {
        registry.callStarted()
        guard busy else { return }
        busyCalls += 1
        if let idleTimer {
            loop.cancelTimer(idleTimer)
            self.idleTimer = nil
        }
    }

    func requestEnded(busy: Bool) {
        registry.callEnded()
        guard busy else { return }
        busyCalls -= 1
        if busyCalls == 0 { armIdleTimer() }
    }

    /// An HTTP/1.1 client stalled inside a request: closed after what was already answered.
    func closeStalledClient(_ why: String) {
        guard let transport, !transport.isClosed else { return }
        transport.close(flushFirst: true, error: TransportError("client closed: \(why)"))
    }

    /// A session call for a Connect stream failed (the stream is gone).
    func connectStreamFailed(_ streamID: Int32) {
        removeConnectStream(streamID)?.cancel()
    }

    @discardableResult
    func removeConnectStream(_ streamID: Int32) -> ConnectHTTP2Stream? {
        // Most connections have none: no hashing of the id for every gRPC call that ends.
        guard !connectStreams.isEmpty, let stream = connectStreams.removeValue(forKey: streamID) else { return nil }
        requestEnded(busy: stream.keepsConnectionBusy)
        return stream
    }

    func resetAfterNextFlush(_ streamID: Int32) {
        transport.resetAfterFlush(streamID)
    }

    /// A session call for `call` failed (the stream is already gone): forget the call.
    func streamFailed(_ call: GRPCServerCall, error: any Error) {
        call.cancel()
        removeCall(call.streamID)
    }

    // MARK: Life cycle

    func addCall(_ call: GRPCServerCall) {
        calls[call.streamID] = call
        registry.callStarted()
    }

    /// An admitted call began: the connection is in use. Keyless calls (Health) never count, so
    /// a health watch cannot hold a connection open past the idle timeout for ever.
    func callBecameBusy(_ call: GRPCServerCall) {
        guard call.admitted() else { return }
        busyCalls += 1
        if let idleTimer {
            loop.cancelTimer(idleTimer)
            self.idleTimer = nil
        }
    }

    @discardableResult
    private func removeCall(_ streamID: Int32) -> GRPCServerCall? {
        guard let call = calls.removeValue(forKey: streamID) else { return nil }
        registry.callEnded()
        if call.leftConnection() {
            busyCalls -= 1
            if busyCalls == 0 { armIdleTimer() }
        }
        return call
    }

    /// With no admitted call for `idleTimeout`, the connection says GOAWAY (`max_idle`) and closes.
    private func armIdleTimer() {
        guard let timeout = configuration.idleTimeout, idleTimer == nil, !shuttingDown,
            transport?.isClosed != true
        else { return }
        idleTimer = loop.schedule(after: timeout) { [self] in
            idleTimer = nil
            guard busyCalls == 0, let transport, !transport.isClosed else { return }
            guard transport.isReady, transport.version == .http2 else {
                // Never finished its TLS handshake (nothing to say goodbye over), or HTTP/1.1
                // with no request in progress (busyCalls counts them).
                transport.close(flushFirst: transport.version == .http1)
                return
            }
            try? session.goAway(errorCode: .noError, debugData: Array("max_idle".utf8))
            flush()
            closeIfStillIdle(after: timeout)
        }
    }

    /// After the idle GOAWAY the session winds down by itself, unless the peer holds a stream open
    /// without ever finishing its header block (a slowloris: no call begins, so nothing times out,
    /// and nghttp2 keeps wanting to read). Still there and still without a call `timeout` later:
    /// closed, keyless calls (a health watch) and all. An admitted call that begins meanwhile
    /// cancels this (``callBecameBusy(_:)``).
    private func closeIfStillIdle(after timeout: Duration) {
        idleTimer = loop.schedule(after: timeout) { [self] in
            idleTimer = nil
            guard busyCalls == 0, let transport, !transport.isClosed else { return }
            transport.close(flushFirst: true)
        }
    }

    /// Graceful shutdown (gRPC's two-phase GOAWAY): a GOAWAY with the largest stream id now, so the
    /// client stops opening calls while those in flight can still arrive; the final GOAWAY with the
    /// real last stream id a moment later. Running calls finish; then the session winds down and
    /// the transport closes.
    func shutDownGracefully() {
        guard !shuttingDown, let transport, !transport.isClosed else { return }
        shuttingDown = true
        guard transport.isReady else {
            transport.close(flushFirst: false)
            return
        }
        if let http1 {
            // HTTP/1.1's GOAWAY: the answers to what was read, the last saying Connection: close.
            http1.shutDownGracefully()
            return
        }
        if let idleTimer { loop.cancelTimer(idleTimer) }
        idleTimer = nil
        try? session.sendShutdownNotice()
        flush()
        loop.schedule(after: .milliseconds(200)) { [self] in
            guard let transport = self.transport, !transport.isClosed else { return }
            try? session.goAway(errorCode: .noError, debugData: Array("shutdown".utf8))
            flush()
        }
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTPTransport) {
        if let tls, tls.peerCertificateVerified {
            clientCertificateCommonName = tls.peerCertificateSubjectCommonName
        }
    }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        for streamID in Array(calls.keys) { removeCall(streamID)?.cancel(detached: abandoned) }
        for streamID in Array(connectStreams.keys) { removeConnectStream(streamID)?.cancel() }
        http1?.closed()
        drainWaiters.removeAll()  // each was resumed by its call's end
        connectDrainWaiters.removeAll()
        transport.onFlushed = nil
        if let idleTimer { loop.cancelTimer(idleTimer) }
        idleTimer = nil
        if let writeTimer { loop.cancelTimer(writeTimer) }
        writeTimer = nil
        if let requestTimer { loop.cancelTimer(requestTimer) }
        requestTimer = nil
        requestDeadlines.removeAll()  // each was cancelled above
        headReader.releaseKeptBuffers()
        registry.unregister(self)
    }

    // MARK: HTTP/2 events

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        // A client's new streams come in increasing order (RFC 9113 5.1.1): one above the last
        // begun has no call yet, and needs no lookup.
        if streamID <= lastBegunStreamID {
            if let call = calls[streamID] {
                // Trailers from a client are allowed by HTTP/2 and meaningless to gRPC.
                if endStream { call.receiveEnd() }
                return
            }
            if let stream = connectStreams[streamID] {
                if endStream { stream.receiveEnd() }
                return
            }
        }
        lastBegunStreamID = max(lastBegunStreamID, streamID)
        // The block went to the head reader (``http2Session(_:headerFieldSinkForStream:)``); a
        // session without sinks gives it whole.
        if !headers.isEmpty || headReader.streamID != streamID { headReader.read(headers, streamID: streamID) }
        if !headReader.isGRPC {
            startConnectStream(headers: headReader.headers, streamID: streamID, endStream: endStream)
            return
        }
        startCall(head: headReader.head(router: router), streamID: streamID, endStream: endStream)
    }

    /// Every block's fields go to the head reader, trailers too (a call ignores them): no lookup
    /// of the stream per block.
    override func http2Session(
        _ session: HTTP2Session, headerFieldSinkForStream streamID: Int32
    ) -> HTTP2HeaderFieldSink? {
        headReader.begin(streamID: streamID)
        return headReader
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        // The connection's window reopens at once: what the calls keep is bounded by the request
        // budget, and bytes of calls that ended are dropped as they come.
        session.consumeConnection(bytes: data.count)
        guard let call = calls[streamID] else {
            session.consumeStream(streamID, bytes: data.count)
            if let stream = connectStreams[streamID] {
                // Bounded by the stream's body limit (past it the request is refused).
                stream.receive(data)
                if endStream { stream.receiveEnd() }
            }
            return
        }
        if data.count > 0, call.receive(data) { session.consumeStream(streamID, bytes: data.count) }
        if endStream { call.receiveEnd() }
    }

    override func http2Session(_ session: HTTP2Session, didNotSendFrameOnStream streamID: Int32, error: HTTP2Error) {
        let call = calls[streamID]
        configuration.callObserver?.serverEvent(.responseNotSent(peer: peer, path: call?.path, error: error.message))
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        watch.streamEnded()
        removeCall(streamID)?.cancel()
        removeConnectStream(streamID)?.cancel()
    }
}
