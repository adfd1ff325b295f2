import PushHTTP1
import PushHTTP2
import PushPosix
import PushTLS
import PushTransport

/// One client connection of a ``MockHTTP2Server`` in HTTP/1.1 mode: TLS + an
/// ``HTTP1ServerSession`` via ``HTTPTransport``; each request is handed whole to
/// ``MockRequestHandler/handle(_:now:)`` and answered (after the response delay, if any) in
/// request order, on a kept-alive connection as Amazon's and Google's HTTP/1.1 front ends do.
///
/// Confined to its loop, hence `@unchecked Sendable`.
final class MockHTTP1Connection: HTTP1ServerSessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    let id: Int
    let loop: EventLoop
    private let context: MockHTTP2Context
    private var settings: MockServerSettings { context.settings }
    private var transport: HTTPTransport!
    private let session: HTTP1ServerSession
    private var isClosed = false
    private var wasReady = false
    private var requestsSeen = 0
    private var maxInFlight = 0
    private let delayNanos: UInt64

    static func serve(_ connection: Connection, id: Int, context: MockHTTP2Context) throws -> HTTPTransport {
        let server = MockHTTP1Connection(id: id, loop: connection.loop, context: context)
        let tls = try TLSConnection(context: context.tls)
        let transport = HTTPTransport(loop: connection.loop, tls: tls, http1Server: server.session, owner: server)
        server.transport = transport
        context.http1Connections.register(server, id: id)
        return context.start(transport, on: connection)
    }

    /// The connection of a client that chose HTTP/1.1 on a transport offering both versions
    /// (``MockALPNConnection``).
    static func adopting(
        _ transport: HTTPTransport, id: Int, context: MockHTTP2Context
    ) -> (MockHTTP1Connection, HTTPServerSession) {
        let server = MockHTTP1Connection(id: id, loop: transport.loop, context: context)
        server.transport = transport
        context.http1Connections.register(server, id: id)
        return (server, .http1(server.session))
    }

    private init(id: Int, loop: EventLoop, context: MockHTTP2Context) {
        self.id = id
        self.loop = loop
        self.context = context
        session = HTTP1ServerSession(maxBodyBytes: context.settings.maxBodyBytes)
        delayNanos = nanoseconds(context.settings.responseDelay)
        session.delegate = self
    }

    /// Server shutdown: answer what was read, then close (the last answer says `Connection: close`).
    func shutDownGracefully() {
        guard !isClosed else { return }
        session.closeAfter(sequence: requestsSeen - 1)
        transport.setNeedsFlush()
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTPTransport) { wasReady = true }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        isClosed = true
        context.events.connectionClosed(cancelledStreams: session.unanswered, handshakeFailed: !wasReady)
        context.http1Connections.unregister(id: id)
    }

    // MARK: Requests

    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
        requestsSeen += 1
        var mock = MockRequest(connectionID: id, streamID: Int32(truncatingIfNeeded: request.sequence * 2 + 1))
        mock.method = request.method
        mock.path = request.target
        for (name, value) in request.headers {
            if name == "host" { mock.authority = value } else { mock.headers[name] = value }
        }
        mock.body = request.body
        mock.bodyLength = request.bodyLength
        maxInFlight = max(maxInFlight, session.unanswered)
        context.events.streamOpened(inFlight: maxInFlight)
        if let limit = settings.goAwayAfterStreams, requestsSeen == limit {
            // HTTP/1.1's GOAWAY: this answer says Connection: close, and the connection ends.
            session.closeAfter(sequence: request.sequence)
            context.events.goAwaySent()
        }
        let response = context.handler.handle(mock, now: loop.now)
        context.events.answered(status: response.status, error: response.statsError)
        guard delayNanos > 0 else {
            respond(request.sequence, response)
            return
        }
        _ = loop.schedule(at: transport.lastReceivedAt &+ delayNanos) { [self] in
            respond(request.sequence, response)
        }
    }

    private func respond(_ sequence: Int, _ response: MockResponse) {
        guard !isClosed else { return }
        let headers = response.headers.map { ($0.nameString, $0.valueString) }
        try? session.respond(
            to: sequence, status: response.status, reason: Self.reason(response.status), headers: headers,
            body: response.body)
        transport.setNeedsFlush()
    }

    /// The reason phrase of a status line (clients ignore it; Amazon sends the standard ones).
    static func reason(_ status: Int) -> String { HTTP1Writer.reasonPhrase(status) }
}
