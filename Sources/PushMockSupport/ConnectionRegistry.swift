import PushPosix
import PushSync
import Synchronization

/// A mock server's open connections by id (numbered from 1 in accept order), so that closing the
/// server can reach each of them on its own loop.
package final class ConnectionRegistry<Connection: AnyObject & Sendable>: Sendable {
    private let ids = Atomic<Int>(0)
    private let connections = Locked<[Int: Connection]>([:])

    package init() {}

    package func nextID() -> Int { ids.wrappingAdd(1, ordering: .relaxed).newValue }

    package func register(_ connection: Connection, id: Int) {
        connections.withLock { $0[id] = connection }
    }

    package func unregister(id: Int) {
        _ = connections.withLock { $0.removeValue(forKey: id) }
    }

    package var open: [Connection] { connections.withLock { Array($0.values) } }
}
