public import PushPosix

/// Accepting HTTP connections: each accepted socket gets the transport `serve` makes for it.
public enum HTTPListener {
    /// Binds `host:port` on the group's loops. When `serve` fails for a connection (its HTTP/2 session
    /// cannot be created), that connection is closed and the listener goes on.
    public static func listen(
        host: String, port: Int, group: EventLoopGroup,
        serve: @escaping @Sendable (Connection) throws -> HTTPTransport
    ) throws -> TCPServer {
        try TCPServer.listen(host: host, port: port, group: group) { connection in
            do {
                return try serve(connection)
            } catch {
                connection.close(flushFirst: false)
                return ClosedConnectionHandler()
            }
        }
    }
}

/// Stands in for a handler whose session could not be created (the connection is closed at once).
private final class ClosedConnectionHandler: ConnectionHandler {
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {}
    func connectionDidDrain(_ connection: Connection) {}
    func connectionDidClose(_ connection: Connection, error: IOError?) {}
}
