import PushPosix
import PushSync
import Synchronization

/// The server's open connections and running calls, across loops: for the connection limit, and
/// for a graceful shutdown that tells every connection to finish and waits for the calls to end.
final class GRPCConnectionRegistry: Sendable {
    private struct State {
        var connections: [ObjectIdentifier: GRPCServerConnection] = [:]
        var shuttingDown = false
    }

    private let state = Locked(State())
    private let calls = Atomic<Int>(0)
    let maxConnections: Int
    /// Request bytes held by all connections together (each connection's budget draws on it).
    let requestBudget: GRPCRequestBudget

    init(maxConnections: Int, maxBufferedRequestBytes: Int = 1 << 30) {
        self.maxConnections = maxConnections
        self.requestBudget = GRPCRequestBudget(limit: maxBufferedRequestBytes, owner: "all connections")
    }

    /// Adds a connection; false when the limit is reached or the server is shutting down.
    func register(_ connection: GRPCServerConnection) -> Bool {
        state.withLock { state in
            guard !state.shuttingDown, state.connections.count < maxConnections else { return false }
            state.connections[ObjectIdentifier(connection)] = connection
            return true
        }
    }

    func unregister(_ connection: GRPCServerConnection) {
        _ = state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    func callStarted() { calls.add(1, ordering: .relaxed) }
    func callEnded() { calls.subtract(1, ordering: .relaxed) }

    var activeCalls: Int { calls.load(ordering: .relaxed) }
    var openConnections: Int { state.withLock { $0.connections.count } }

    /// Every connection sends GOAWAY (two-phase) and closes once its calls are done.
    func beginShutdown() {
        let open = state.withLock { state in
            state.shuttingDown = true
            return Array(state.connections.values)
        }
        for connection in open {
            connection.loop.execute { connection.shutDownGracefully() }
        }
    }
}
