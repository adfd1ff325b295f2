import PushHTTP2
import PushPosix
import PushTLS
import PushTransport

/// One client connection of a ``MockHTTP2Server``: TLS + HTTP/2 via ``HTTPTransport``; each
/// stream's request is collected, handed to ``MockRequestHandler/handle(_:now:)`` at END_STREAM,
/// and answered (after the response delay, if any) as HEADERS + one DATA frame with the body.
///
/// Confined to its loop (every entry point is a loop callback or a task the server hops onto the
/// loop), hence `@unchecked Sendable`.
final class MockHTTP2Connection: HTTP2SessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    private final class Stream {
        var request: MockRequest
        var answered = false
        var closed = false
        init(_ request: MockRequest) { self.request = request }
    }

    let id: Int
    let loop: EventLoop
    private let context: MockHTTP2Context
    private var settings: MockServerSettings { context.settings }
    private var transport: HTTPTransport!
    private var session: HTTP2Session { transport.session }

    private var streams: [Int32: Stream] = [:]
    private var streamsSeen = 0
    private var isClosed = false
    private var wasReady = false
    private var goAwayLastStreamID: Int32?
    private var maxInFlight = 0
    private let delayNanos: UInt64

    static func serve(_ connection: Connection, id: Int, context: MockHTTP2Context) throws -> HTTPTransport {
        let server = MockHTTP2Connection(id: id, loop: connection.loop, context: context)
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = context.settings.maxConcurrentStreams
        let transport = try HTTPTransport(
            loop: connection.loop, tls: try TLSConnection(context: context.tls), role: .server, settings: settings,
            sessionDelegate: server, owner: server)
        server.transport = transport
        context.connections.register(server, id: id)
        return context.start(transport, on: connection)
    }

    /// The connection of a client that chose h2 on a transport offering both versions
    /// (``MockALPNConnection``): the session is the transport's to make, with what this returns.
    static func adopting(
        _ transport: HTTPTransport, id: Int, context: MockHTTP2Context
    ) -> (MockHTTP2Connection, HTTPServerSession) {
        let server = MockHTTP2Connection(id: id, loop: transport.loop, context: context)
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = context.settings.maxConcurrentStreams
        server.transport = transport
        context.connections.register(server, id: id)
        return (server, .http2(settings, delegate: server))
    }

    private init(id: Int, loop: EventLoop, context: MockHTTP2Context) {
        self.id = id
        self.loop = loop
        self.context = context
        delayNanos = nanoseconds(context.settings.responseDelay)
    }

    /// Server shutdown: GOAWAY, answer what is in flight, then close.
    func shutDownGracefully() {
        guard !isClosed else { return }
        if goAwayLastStreamID == nil { sendGoAway(lastStreamID: session.lastProcessedStreamID) }
        transport.setNeedsFlush()
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTPTransport) { wasReady = true }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        isClosed = true
        let cancelled = streams.values.filter { !$0.answered }.count
        streams.removeAll()
        context.events.connectionClosed(cancelledStreams: cancelled, handshakeFailed: !wasReady)
        context.connections.unregister(id: id)
    }

    // MARK: HTTP/2 events

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        if let stream = streams[streamID] {
            if endStream { finish(stream) }  // trailers: allowed, ignored
            return
        }
        if let last = goAwayLastStreamID, streamID > last {
            try? session.resetStream(streamID: streamID, errorCode: .refusedStream)
            return
        }
        streamsSeen += 1
        var request = MockRequest(connectionID: id, streamID: streamID)
        for header in headers {
            let name = header.nameString
            switch name {
            case ":method": request.method = header.valueString
            case ":path": request.path = header.valueString
            case ":authority": request.authority = header.valueString
            case "host" where request.authority.isEmpty: request.authority = header.valueString
            default: if !name.hasPrefix(":") { request.headers[name] = header.valueString }
            }
        }
        let stream = Stream(request)
        streams[streamID] = stream
        maxInFlight = max(maxInFlight, streams.count)
        context.events.streamOpened(inFlight: maxInFlight)
        if let limit = settings.goAwayAfterStreams, streamsSeen == limit, goAwayLastStreamID == nil {
            sendGoAway(lastStreamID: streamID)
        }
        if endStream { finish(stream) }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard let stream = streams[streamID], !stream.answered else { return }
        let room = settings.maxBodyBytes + 1 - stream.request.body.count
        if room > 0 { stream.request.body.append(contentsOf: data.prefix(room)) }
        stream.request.bodyLength += data.count
        if stream.request.bodyLength > settings.maxBodyBytes {
            // Don't wait for (or keep) the rest: answer now and reset once the answer is out.
            finish(stream)
            if !endStream { transport.resetAfterFlush(streamID) }
            return
        }
        if endStream { finish(stream) }
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        stream.closed = true
        if !stream.answered { context.events.streamCancelled() }
    }

    // MARK: Answers

    private func finish(_ stream: Stream) {
        guard !stream.answered else { return }
        stream.answered = true
        let response = context.handler.handle(stream.request, now: loop.now)
        context.events.answered(status: response.status, error: response.statsError)
        guard delayNanos > 0 else {
            respond(stream, response)
            return
        }
        // The delay stands in for a network round trip, so it counts from when the request's
        // bytes arrived. Deadlines are in arrival order, so timers fire in order too.
        _ = loop.schedule(at: transport.lastReceivedAt &+ delayNanos) { [self] in
            respond(stream, response)
            transport.setNeedsFlush()
        }
    }

    private func respond(_ stream: Stream, _ response: MockResponse) {
        guard !isClosed, !stream.closed else { return }
        let headers = [HTTP2Header(":status", String(response.status))] + response.headers
        do {
            try session.sendResponseHeaders(streamID: stream.request.streamID, headers: headers, endStream: false)
            try session.sendData(streamID: stream.request.streamID, response.body, endStream: true)
        } catch {
            return  // the stream is gone (reset by the client)
        }
        transport.setNeedsFlush()
    }

    /// GOAWAY NO_ERROR; the transport closes once the streams up to `lastStreamID` are answered.
    private func sendGoAway(lastStreamID: Int32) {
        goAwayLastStreamID = lastStreamID
        try? session.goAway(errorCode: .noError, lastStreamID: lastStreamID)
        context.events.goAwaySent()
    }
}
