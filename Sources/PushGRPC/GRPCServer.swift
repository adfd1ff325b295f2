public import PushPosix
import PushTransport

/// A gRPC server over HTTP/2, and the same methods over the Connect protocol (HTTP/1.1 and
/// HTTP/2), with plain HTTP routes beside them, all on one port: TLS (ALPN h2 and http/1.1,
/// optionally with client certificates) when the configuration has a TLS context, else cleartext
/// (h2c with prior knowledge, what gRPC "insecure" channels use, or HTTP/1.1).
///
/// Connections are spread over the loops of an ``EventLoopGroup``; each stays on its loop for life.
public final class GRPCServer: Sendable {
    public let configuration: GRPCServerConfiguration
    private let listener: TCPServer
    private let registry: GRPCConnectionRegistry

    /// Binds and starts accepting. `routes` are plain HTTP endpoints served beside the methods.
    public init(
        configuration: GRPCServerConfiguration, services: [GRPCService], routes: [HTTPRoute] = [],
        group: EventLoopGroup
    ) throws {
        self.configuration = configuration
        let router = GRPCRouter(services: services)
        let routes = HTTPRoutes(routes)
        let registry = GRPCConnectionRegistry(
            maxConnections: configuration.maxConnections, maxBufferedRequestBytes: configuration.maxBufferedRequestBytes
        )
        self.registry = registry
        listener = try HTTPListener.listen(host: configuration.host, port: configuration.port, group: group) {
            connection in
            try GRPCServerConnection.serve(
                connection, router: router, routes: routes, configuration: configuration, registry: registry)
        }
    }

    /// Calls running now, on all connections.
    public var activeCalls: Int { registry.activeCalls }

    /// Request-message bytes held in memory now, over all connections.
    public var bufferedRequestBytes: Int { registry.requestBudget.reserved }

    /// Client connections open now.
    public var openConnections: Int { registry.openConnections }

    /// Graceful shutdown, first step: stop accepting, and tell every client (GOAWAY, two-phase) to
    /// open no new calls; running calls go on. Wait for ``activeCalls`` to reach 0, then stop the loops.
    public func beginShutdown() {
        listener.close()
        registry.beginShutdown()
    }

    /// The port actually bound (useful with port 0).
    public var localPort: Int { listener.localPort }

    /// Stops accepting connections.
    public func close() {
        listener.close()
    }
}
