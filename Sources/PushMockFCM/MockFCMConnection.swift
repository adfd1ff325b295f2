import PushHTTP2
import PushMockSupport
import PushPosix
import PushTLS
import PushTransport

/// One client connection: TLS + HTTP/2 via ``HTTP2Transport``; each stream's request is
/// collected, handed to ``MockFCMShared/handle(_:now:)`` at END_STREAM, and answered (after the
/// response delay, if any) as HEADERS + one DATA frame with the JSON body.
///
/// Confined to its loop (every entry point is a loop callback or a task the server hops onto the
/// loop), hence `@unchecked Sendable`.
final class MockFCMConnection: HTTP2SessionDelegate, HTTP2TransportOwner, @unchecked Sendable {
    private final class Stream {
        var request: MockFCMRequest
        var answered = false
        var closed = false
        init(_ request: MockFCMRequest) { self.request = request }
    }

    let id: Int
    let loop: EventLoop
    private let shared: MockFCMShared
    private var configuration: MockFCMConfiguration { shared.configuration }
    private var transport: HTTP2Transport!
    private var session: HTTP2Session { transport.session }

    private var streams: [Int32: Stream] = [:]
    private var streamsSeen = 0
    private var isClosed = false
    private var wasReady = false
    private var goAwayLastStreamID: Int32?
    private var maxInFlight = 0
    private let delayNanos: UInt64

    static func serve(_ connection: Connection, id: Int, shared: MockFCMShared) throws -> HTTP2Transport {
        let server = MockFCMConnection(id: id, loop: connection.loop, shared: shared)
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = shared.configuration.maxConcurrentStreams
        let transport = try HTTP2Transport(
            loop: connection.loop, tls: try TLSConnection(context: shared.tls), role: .server, settings: settings,
            sessionDelegate: server, owner: server)
        server.transport = transport
        shared.connections.register(server, id: id)
        shared.stats.update { $0.connectionsOpened += 1 }
        transport.attach(connection)
        return transport
    }

    private init(id: Int, loop: EventLoop, shared: MockFCMShared) {
        self.id = id
        self.loop = loop
        self.shared = shared
        delayNanos = nanoseconds(shared.configuration.responseDelay)
    }

    /// Server shutdown: GOAWAY, answer what is in flight, then close.
    func shutDownGracefully() {
        guard !isClosed else { return }
        if goAwayLastStreamID == nil { sendGoAway(lastStreamID: session.lastProcessedStreamID) }
        transport.setNeedsFlush()
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTP2Transport) { wasReady = true }

    func transport(_ transport: HTTP2Transport, didCloseWith error: (any Error)?) {
        isClosed = true
        let cancelled = streams.values.filter { !$0.answered }.count
        streams.removeAll()
        shared.stats.update { stats in
            stats.connectionsClosed += 1
            stats.streamsCancelled += cancelled
            if !wasReady { stats.handshakeFailures += 1 }
        }
        shared.connections.unregister(id: id)
    }

    // MARK: HTTP/2 events

    func http2Session(
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
        var request = MockFCMRequest(connectionID: id, streamID: streamID)
        for header in headers {
            switch header.nameString {
            case ":method": request.method = header.valueString
            case ":path": request.path = header.valueString
            case ":authority": request.authority = header.valueString
            case "host" where request.authority.isEmpty: request.authority = header.valueString
            case "content-type": request.contentType = header.valueString
            case "authorization": request.authorization = header.valueString
            default: break
            }
        }
        let stream = Stream(request)
        streams[streamID] = stream
        maxInFlight = max(maxInFlight, streams.count)
        let inFlight = maxInFlight
        shared.stats.update { stats in
            stats.streamsOpened += 1
            stats.maxInFlight = max(stats.maxInFlight, inFlight)
        }
        if let limit = configuration.goAwayAfterStreams, streamsSeen == limit, goAwayLastStreamID == nil {
            sendGoAway(lastStreamID: streamID)
        }
        if endStream { finish(stream) }
    }

    func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard let stream = streams[streamID], !stream.answered else { return }
        let room = configuration.maxBodyBytes + 1 - stream.request.body.count
        if room > 0 { stream.request.body.append(contentsOf: data.prefix(room)) }
        stream.request.bodyLength += data.count
        if stream.request.bodyLength > configuration.maxBodyBytes {
            // Don't wait for (or keep) the rest: answer now and reset once the answer is out.
            finish(stream)
            if !endStream { transport.resetAfterFlush(streamID) }
            return
        }
        if endStream { finish(stream) }
    }

    func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        stream.closed = true
        if !stream.answered { shared.stats.update { $0.streamsCancelled += 1 } }
    }

    // MARK: Answers

    private func finish(_ stream: Stream) {
        guard !stream.answered else { return }
        stream.answered = true
        let response = shared.handle(stream.request, now: loop.now)
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

    private func respond(_ stream: Stream, _ response: MockFCMResponse) {
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
        shared.stats.update { $0.goAwaysSent += 1 }
    }
}
