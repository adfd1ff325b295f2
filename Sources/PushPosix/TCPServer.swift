import Glibc

/// A listening TCP socket. Accepts on `group.loops[0]` and hands each accepted socket,
/// round-robin, to a loop of the group, where the handler is created and the Connection
/// registered.
///
/// `@unchecked Sendable`: `localPort`, `group` and `acceptLoop` are immutable; the listener
/// state lives in `Listener`, which only `acceptLoop`'s thread touches.
public final class TCPServer: @unchecked Sendable {
    public let localPort: Int
    private let acceptLoop: EventLoop
    private let listener: Listener

    private init(localPort: Int, acceptLoop: EventLoop, listener: Listener) {
        self.localPort = localPort
        self.acceptLoop = acceptLoop
        self.listener = listener
    }

    /// Binds and listens (SO_REUSEADDR, non-blocking, port 0 = ephemeral; see `localPort`).
    /// Throws ESHUTDOWN if the group is already shut down.
    public static func listen(
        host: String, port: Int, group: EventLoopGroup, backlog: Int32 = 1024,
        makeHandler: @escaping @Sendable (Connection) -> any ConnectionHandler
    ) throws -> TCPServer {
        let address = try SocketAddress.resolve(host: host, port: port, passive: true)[0]
        let fd = try Socket.makeTCP(family: address.family)
        do {
            try Socket.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            _ = try syscallChecked("bind \(address)") { address.withSockAddr { Glibc.bind(fd, $0, $1) } }
            _ = try syscallChecked("listen \(address)") { Glibc.listen(fd, backlog) }
            let bound = try SocketAddress.of(fd: fd, peer: false)
            let acceptLoop = group.loops[0]
            let listener = Listener(fd: fd, loop: acceptLoop, group: group, makeHandler: makeHandler)
            let register: @Sendable () -> Void = { listener.register() }
            if acceptLoop.inEventLoop {
                register()
            } else if !acceptLoop.tryExecute(register) {
                throw IOError(errno: ESHUTDOWN, reason: "listen: event loop \(acceptLoop.name) is shut down")
            }
            return TCPServer(localPort: bound.port, acceptLoop: acceptLoop, listener: listener)
        } catch {
            closeDescriptor(fd)
            throw error
        }
    }

    /// Any thread: stop accepting and close the listening socket. From another thread this
    /// is asynchronous (done on the accept loop's next turn); if the loop is already shut
    /// down, it closed the socket then.
    public func close() {
        let listener = self.listener
        if acceptLoop.inEventLoop {
            listener.close()
        } else {
            acceptLoop.execute { listener.close() }
        }
    }
}

/// The accept side of a TCPServer. `@unchecked Sendable` only so it can be passed to its
/// loop: it is confined to `loop`'s thread (group.loops[0]).
final class Listener: Selectable, @unchecked Sendable {
    /// How long to stop accepting after running out of descriptors or memory. Level-triggered
    /// epoll would otherwise report the pending connection again at once and spin the loop.
    static let backoff: Duration = .milliseconds(100)

    private var fd: Int32
    private let loop: EventLoop
    private let group: EventLoopGroup
    private let makeHandler: @Sendable (Connection) -> any ConnectionHandler
    private var registrationID: UInt64 = 0
    private var backoffTimer: TimerID?

    init(
        fd: Int32, loop: EventLoop, group: EventLoopGroup,
        makeHandler: @escaping @Sendable (Connection) -> any ConnectionHandler
    ) {
        self.fd = fd
        self.loop = loop
        self.group = group
        self.makeHandler = makeHandler
    }

    /// Loop thread. If even registering fails there is nothing to serve: close.
    func register() {
        guard fd >= 0 else { return }
        do {
            registrationID = try loop.register(self, fd: fd, events: LinuxCalls.epollIn)
        } catch {
            closeDescriptor(fd)
            fd = -1
        }
    }

    func close() {
        guard fd >= 0 else { return }
        if registrationID != 0 { loop.deregister(id: registrationID, fd: fd) }
        closeDescriptor(fd)
        fd = -1
        registrationID = 0
        if let backoffTimer { loop.cancelTimer(backoffTimer) }
        backoffTimer = nil
    }

    func closeForShutdown() { close() }

    func handleEvents(_ events: UInt32) {
        // accept4 until EAGAIN. The kernel backlog bounds how many can be waiting.
        while fd >= 0 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let result = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    Result { () throws(IOError) -> IOResult<Int32> in
                        try syscall("accept4") {
                            LinuxCalls.accept4(fd, address, &length, LinuxCalls.nonBlocking | LinuxCalls.closeOnExec)
                        }
                    }
                }
            }
            switch result {
            case .success(.wouldBlock):
                return
            case .success(.processed(let client)):
                let peer = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
                }
                handOff(client, peer: peer)
            case .failure(let error):
                switch error.errno {
                case ECONNABORTED, EPROTO, EPERM:
                    continue  // that one client is gone or was refused; the next may be fine
                default:
                    // EMFILE, ENFILE, ENOBUFS, ENOMEM...: back off instead of spinning.
                    pause()
                    return
                }
            }
        }
    }

    private func pause() {
        guard fd >= 0, backoffTimer == nil else { return }
        do {
            try loop.modify(id: registrationID, fd: fd, events: 0)
        } catch {
            close()
            return
        }
        backoffTimer = loop.schedule(after: Self.backoff) { [self] in
            backoffTimer = nil
            guard fd >= 0 else { return }
            do {
                try loop.modify(id: registrationID, fd: fd, events: LinuxCalls.epollIn)
            } catch {
                close()
            }
        }
    }

    private func handOff(_ client: Int32, peer: SocketAddress) {
        do {
            try Socket.setNoDelay(client)
        } catch {
            closeDescriptor(client)
            return
        }
        let target = group.next()
        let makeHandler = self.makeHandler
        let adopt: @Sendable () -> Void = {
            let connection = Connection(fd: client, loop: target, peer: peer)
            do {
                try connection.register()
            } catch {
                closeDescriptor(client)
                return
            }
            connection.handler = makeHandler(connection)
        }
        if target.inEventLoop {
            adopt()
        } else if !target.tryExecute(adopt) {
            closeDescriptor(client)  // that loop is shutting down; nobody will own the socket
        }
    }
}
