import PushPosix
import PushTLS
import PushTransport

/// What a mock answers requests with. Called on the connection's loop, once per request at
/// END_STREAM (or once its body is over the limit); `now` is the loop's monotonic clock.
package protocol MockRequestHandler: AnyObject, Sendable {
    func handle(_ request: MockRequest, now: UInt64) -> MockResponse
}

/// How every connection of a mock server behaves, whatever it mocks.
package struct MockConnectionLimits: Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    package var maxConcurrentStreams: UInt32
    /// Waits this long (on loop timers, never blocking) before answering each request.
    package var responseDelay: Duration
    /// After this many streams on a connection, send GOAWAY (NO_ERROR, last-stream-id = the Nth
    /// stream), answer the streams up to it and close.
    package var goAwayAfterStreams: Int?
    /// Request bodies longer than this are not kept: the handler sees the first
    /// `maxBodyBytes + 1` bytes and the full length, and answers at once.
    package var maxBodyBytes: Int

    package init(maxConcurrentStreams: UInt32, responseDelay: Duration, goAwayAfterStreams: Int?, maxBodyBytes: Int) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.responseDelay = responseDelay
        self.goAwayAfterStreams = goAwayAfterStreams
        self.maxBodyBytes = maxBodyBytes
    }
}

/// What every connection of one ``MockHTTP2Server`` shares.
final class MockHTTP2Context: Sendable {
    let tls: TLSContext
    let limits: MockConnectionLimits
    let handler: any MockRequestHandler
    let events: any MockConnectionEvents
    let connections = ConnectionRegistry<MockHTTP2Connection>()

    init(tls: TLSContext, limits: MockConnectionLimits, handler: any MockRequestHandler, events: any MockConnectionEvents) {
        self.tls = tls
        self.limits = limits
        self.handler = handler
        self.events = events
    }
}

/// The listener half of a request/response mock (mock-fcm, mock-adm): TLS + HTTP/2 (ALPN h2) on
/// every loop of a group, each connection a ``MockHTTP2Connection`` handing whole requests to
/// `handler` and reporting to `events`.
package final class MockHTTP2Server: Sendable {
    /// The certificate clients should trust (PEM): the generated one, or the chain given as PEM;
    /// nil when the identity came from files.
    package let certificatePEM: String?
    private let context: MockHTTP2Context
    private let listener: TCPServer

    /// Binds the listener and starts accepting on `group`'s loops.
    package init(
        host: String, port: Int, identity: MockServerIdentity, commonName: String, limits: MockConnectionLimits,
        handler: any MockRequestHandler, events: any MockConnectionEvents, group: EventLoopGroup
    ) throws {
        let (tls, certificatePEM) = try identity.makeServerContext(commonName: commonName)
        self.certificatePEM = certificatePEM
        let context = MockHTTP2Context(tls: tls, limits: limits, handler: handler, events: events)
        self.context = context
        listener = try HTTP2Listener.listen(host: host, port: port, group: group) { connection in
            try MockHTTP2Connection.serve(connection, id: context.connections.nextID(), context: context)
        }
    }

    /// The port actually bound (useful with port 0).
    package var localPort: Int { listener.localPort }

    /// Stops accepting and tells every open connection to finish: GOAWAY, answer what is in
    /// flight, then close. Asynchronous (each connection acts on its own loop).
    package func close() {
        listener.close()
        for connection in context.connections.open {
            connection.loop.execute { connection.shutDownGracefully() }
        }
    }
}
