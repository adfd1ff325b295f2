package import PushPosix
import PushTLS
import PushTransport

/// What a mock answers requests with. Called on the connection's loop, once per request at
/// END_STREAM (or once its body is over the limit); `now` is the loop's monotonic clock.
package protocol MockRequestHandler: AnyObject, Sendable {
    func handle(_ request: MockRequest, now: UInt64) -> MockResponse
}

/// What every connection of one ``MockHTTP2Server`` shares.
final class MockHTTP2Context: Sendable {
    let tls: TLSContext
    let settings: MockServerSettings
    let handler: any MockRequestHandler
    let events: any MockConnectionEvents
    let connections = ConnectionRegistry<MockHTTP2Connection>()
    let http1Connections = ConnectionRegistry<MockHTTP1Connection>()

    init(
        tls: TLSContext, settings: MockServerSettings, handler: any MockRequestHandler, events: any MockConnectionEvents
    ) {
        self.tls = tls
        self.settings = settings
        self.handler = handler
        self.events = events
    }

    /// A new connection's transport is made and registered: counted as opened and attached to its
    /// socket (the same for both HTTP versions).
    func start(_ transport: HTTPTransport, on connection: Connection) -> HTTPTransport {
        events.connectionOpened()
        transport.attach(connection)
        return transport
    }
}

/// The listener half of a request/response mock (mock-fcm, mock-adm, mock-webpush): TLS + HTTP/2
/// (ALPN h2), HTTP/1.1 (ALPN http/1.1, ``MockServerSettings/http1``) or both, chosen per connection
/// (``MockServerSettings/offersBothVersions``), on every loop of a group, each connection a
/// ``MockHTTP2Connection`` or ``MockHTTP1Connection`` handing whole requests to `handler` and
/// reporting to `events`.
package final class MockHTTP2Server: Sendable {
    /// The certificate clients should trust (PEM): the generated one, or the chain given as PEM;
    /// nil when the identity came from files.
    package let certificatePEM: String?
    private let context: MockHTTP2Context
    private let listener: TCPServer

    /// Binds the listener and starts accepting on `group`'s loops; `commonName` names the
    /// generated certificate.
    package init(
        settings: MockServerSettings, commonName: String, handler: any MockRequestHandler,
        events: any MockConnectionEvents, group: EventLoopGroup
    ) throws {
        let alpn = settings.offersBothVersions ? ["h2", "http/1.1"] : settings.http1 ? ["http/1.1"] : ["h2"]
        let (tls, certificatePEM) = try settings.identity.makeServerContext(commonName: commonName, alpn: alpn)
        self.certificatePEM = certificatePEM
        let context = MockHTTP2Context(tls: tls, settings: settings, handler: handler, events: events)
        self.context = context
        listener = try HTTPListener.listen(host: settings.host, port: settings.port, group: group) { connection in
            if settings.offersBothVersions {
                return try MockALPNConnection.serve(connection, id: context.connections.nextID(), context: context)
            }
            if settings.http1 {
                return try MockHTTP1Connection.serve(connection, id: context.connections.nextID(), context: context)
            }
            return try MockHTTP2Connection.serve(connection, id: context.connections.nextID(), context: context)
        }
    }

    /// The port actually bound (useful with port 0).
    package var localPort: Int { listener.localPort }

    /// `https://<host>:<port>` as clients on this machine address it (127.0.0.1 when listening on
    /// a wildcard address).
    package var baseURL: String {
        var host = context.settings.host
        if host == "0.0.0.0" || host == "::" || host.isEmpty { host = "127.0.0.1" }
        if host.contains(":") { host = "[\(host)]" }
        return "https://\(host):\(localPort)"
    }

    /// Stops accepting and tells every open connection to finish: GOAWAY, answer what is in
    /// flight, then close. Asynchronous (each connection acts on its own loop).
    package func close() {
        listener.close()
        for connection in context.connections.open {
            connection.loop.execute { connection.shutDownGracefully() }
        }
        for connection in context.http1Connections.open {
            connection.loop.execute { connection.shutDownGracefully() }
        }
    }
}
