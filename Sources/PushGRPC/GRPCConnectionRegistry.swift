import Synchronization

/// The server's open connections and running calls, across loops: for the connection limit, and
/// for a graceful shutdown that tells every connection to finish and waits for the calls to end.
final class GRPCConnectionRegistry: Sendable {
    private let connections = Mutex<[ObjectIdentifier: GRPCServerConnection]>([:])
    private let calls = Atomic<Int>(0)
    private let shuttingDown = Atomic<Bool>(false)
    let maxConnections: Int

    init(maxConnections: Int) {
        self.maxConnections = maxConnections
    }

    /// Adds a connection; false when the limit is reached or the server is shutting down.
    func register(_ connection: GRPCServerConnection) -> Bool {
        guard !shuttingDown.load(ordering: .relaxed) else { return false }
        return connections.withLock { connections in
            guard connections.count < maxConnections else { return false }
            connections[ObjectIdentifier(connection)] = connection
            return true
        }
    }

    func unregister(_ connection: GRPCServerConnection) {
        _ = connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    func callStarted() { calls.add(1, ordering: .relaxed) }
    func callEnded() { calls.subtract(1, ordering: .relaxed) }

    var activeCalls: Int { calls.load(ordering: .relaxed) }
    var openConnections: Int { connections.withLock { $0.count } }

    /// Every connection sends GOAWAY (two-phase) and closes once its calls are done.
    func beginShutdown() {
        shuttingDown.store(true, ordering: .relaxed)
        for connection in connections.withLock({ Array($0.values) }) {
            connection.loop.execute { connection.shutDownGracefully() }
        }
    }
}
