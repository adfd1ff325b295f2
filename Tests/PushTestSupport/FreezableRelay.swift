public import PushPosix
import PushSync
import Synchronization

/// A TCP relay between a client and a server whose current connections can go silent (drop
/// every byte, close nothing): a connection that died somewhere on the network, which only PING can
/// find out. Connections made after `freeze()` pass normally.
public final class FreezableRelay: Sendable {
    final class Flag: Sendable {
        let frozen = Atomic<Bool>(false)
    }

    final class Flags: Sendable {
        let list = Locked<[Flag]>([])
    }

    private let listener: TCPServer
    private let flags = Flags()

    public init(group: EventLoopGroup, targetPort: Int) throws {
        let flags = self.flags
        listener = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { inbound in
            let flag = Flag()
            flags.list.withLock { $0.append(flag) }
            let toClient = RelaySide(peer: inbound, flag: flag)
            let toServer = RelaySide(peer: nil, flag: flag)
            Connection.connect(host: "127.0.0.1", port: targetPort, on: inbound.loop, handler: toClient) { result in
                if case .success(let outbound) = result {
                    toServer.attach(outbound)
                } else {
                    inbound.close(flushFirst: false)
                }
            }
            return toServer
        }
    }

    public var port: Int { listener.localPort }

    public func freeze() {
        flags.list.withLock { flags in
            for flag in flags { flag.frozen.store(true, ordering: .relaxed) }
        }
    }
}

/// Forwards what its connection receives to `peer` (buffering until the peer is connected).
private final class RelaySide: ConnectionHandler, @unchecked Sendable {
    private var peer: Connection?
    private var pending: [UInt8] = []
    private let flag: FreezableRelay.Flag

    init(peer: Connection?, flag: FreezableRelay.Flag) {
        self.peer = peer
        self.flag = flag
    }

    func attach(_ peer: Connection) {
        self.peer = peer
        if !pending.isEmpty { peer.write(pending) }
        pending = []
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        guard !flag.frozen.load(ordering: .relaxed) else { return }
        if let peer { peer.write(bytes) } else { pending.append(contentsOf: bytes) }
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        peer?.close(flushFirst: true)
    }
}
