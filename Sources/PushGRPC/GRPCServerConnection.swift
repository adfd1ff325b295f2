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
///
/// By job, in four files: the session and transport events here; starting a new stream's call and
/// the table of calls in +Streams; the idle timeout, request time limit and graceful shutdown in
/// +Timers; the client watch and drain waiters in +ClientWatch. The state they share is
/// module-internal for that, and only the connection's own code changes it.
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
    var calls = HTTP2StreamTable<GRPCServerCall>()
    /// HTTP/2 streams that are not gRPC: Connect calls and plain routes.
    var connectStreams: [Int32: ConnectHTTP2Stream] = [:]
    /// Set when the client chose HTTP/1.1.
    var http1: ConnectHTTP1Connection?
    let registry: GRPCConnectionRegistry
    /// The timers hold the connection strongly, not weakly: a weak reference would give it a
    /// side table, sending every retain and release of it (several per call) the slow way. Each is
    /// cancelled when the transport closes, which lets the connection go.
    var idleTimer: TimerID?
    /// Calls that keep the connection from being idle: those a method's admission let in.
    var busyCalls = 0
    var shuttingDown = false
    var requestIDs = GRPCRequestID()
    /// Every header block of the connection's streams goes here as it is decoded.
    let headReader = GRPCRequestHeadReader()
    /// Request bytes this connection's calls hold (drawing on the server's budget).
    let requestBudget: GRPCRequestBudget
    /// When to give up on the client (unread answers, control-frame floods), and its write timer.
    var watch: GRPCClientWatch
    var writeTimer: TimerID?
    /// Calls whose request must be complete within `requestTimeout`, oldest first, and one timer
    /// for them all, set for the oldest (a timer, its closure and its cancelling per call would be
    /// a real share of every unary call). Every call of a connection has the same
    /// limit, so deadlines come in the order the calls began; a call leaves the moment its request
    /// is complete or it ends, which is why the queue is linked through the calls themselves.
    var requestDeadlines = DeadlineQueue<GRPCServerCall.RequestLinkage>()
    var requestTimer: TimerID?
    /// The last limit asked for, in nanoseconds (converted once, not per call).
    var requestTimeLimit: (limit: Duration, nanoseconds: UInt64) = (.zero, 0)
    /// The client was dropped: its calls are detached, not cancelled.
    var abandoned = false
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
    var drainWaiters: [GRPCServerCall] = []
    var connectDrainWaiters: [ConnectCall] = []

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

    /// Counts a frame without headers or body bytes (see ``GRPCClientWatch``).
    override func http2SessionDidReceiveControlFrame(_ session: HTTP2Session) {
        perform(watch.controlFrame(now: loop.now))
    }

    func resetAfterNextFlush(_ streamID: Int32) {
        transport.resetAfterFlush(streamID)
    }

    /// A session call for `call` failed (the stream is already gone): forget the call.
    func streamFailed(_ call: GRPCServerCall, error: any Error) {
        call.cancel()
        removeCall(call.streamID)
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
