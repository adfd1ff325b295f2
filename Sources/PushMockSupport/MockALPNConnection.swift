import PushPosix
import PushTLS
import PushTransport

/// A client connection of a ``MockHTTP2Server`` that offers both HTTP versions: until the TLS
/// handshake it is only this; then the client's ALPN choice makes it a ``MockHTTP2Connection``
/// or a ``MockHTTP1Connection``, to which this forwards the transport's events.
///
/// Confined to its loop, hence `@unchecked Sendable`.
final class MockALPNConnection: HTTPTransportOwner, @unchecked Sendable {
    private let context: MockHTTP2Context
    private var chosen: (any HTTPTransportOwner)?

    private init(context: MockHTTP2Context) { self.context = context }

    static func serve(_ connection: Connection, id: Int, context: MockHTTP2Context) throws -> HTTPTransport {
        let owner = MockALPNConnection(context: context)
        let transport = HTTPTransport(loop: connection.loop, tls: try TLSConnection(context: context.tls), owner: owner)
        {
            transport, version in
            switch version {
            case .http2:
                let (server, session) = MockHTTP2Connection.adopting(transport, id: id, context: context)
                owner.chosen = server
                return session
            case .http1:
                let (server, session) = MockHTTP1Connection.adopting(transport, id: id, context: context)
                owner.chosen = server
                return session
            }
        }
        return context.start(transport, on: connection)
    }

    func transportDidBecomeReady(_ transport: HTTPTransport) { chosen?.transportDidBecomeReady(transport) }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        guard let chosen else {
            // Closed before the handshake chose a version.
            context.events.connectionClosed(cancelledStreams: 0, handshakeFailed: true)
            return
        }
        self.chosen = nil
        chosen.transport(transport, didCloseWith: error)
    }
}
