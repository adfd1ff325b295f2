import PushPosix

/// A gRPC server over HTTP/2 cleartext (h2c with prior knowledge, what gRPC "insecure" channels use).
///
/// Connections are spread over the loops of an ``EventLoopGroup``; each stays on its loop for life.
public final class GRPCServer: Sendable {
    public let configuration: GRPCServerConfiguration
    private let listener: TCPServer

    /// Binds and starts accepting.
    public init(configuration: GRPCServerConfiguration, services: [GRPCService], group: EventLoopGroup) throws {
        self.configuration = configuration
        let router = GRPCRouter(services: services)
        listener = try TCPServer.listen(host: configuration.host, port: configuration.port, group: group) {
            connection in
            do {
                return try GRPCServerConnection.serve(connection, router: router, configuration: configuration)
            } catch {
                connection.close(flushFirst: false)
                return ClosedConnectionHandler()
            }
        }
    }

    /// The port actually bound (useful with port 0).
    public var localPort: Int { listener.localPort }

    /// Stops accepting connections.
    public func close() {
        listener.close()
    }
}

/// Stands in for a handler whose HTTP/2 session could not be created (the connection is closed at once).
private final class ClosedConnectionHandler: ConnectionHandler {
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {}
    func connectionDidDrain(_ connection: Connection) {}
    func connectionDidClose(_ connection: Connection, error: IOError?) {}
}
