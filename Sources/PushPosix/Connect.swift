import Glibc

/// Moves a non-Sendable value into a `@Sendable` closure. Only for hand-overs where the sender
/// stops using the value: here the caller of `connect` gives its handler and completion to the
/// loop, which is the only thread that touches them afterwards.
struct UnsafeTransfer<Value>: @unchecked Sendable {
    let value: Value
}

extension Connection {
    /// Non-blocking TCP connect with TCP_NODELAY on. `host` is an IPv4/IPv6 literal or a name
    /// such as "localhost", resolved by `resolver` off the loop (a slow DNS server delays only
    /// the connections waiting for that name); the addresses `admission` lets through are tried
    /// in order until one connects. `completion` is called on `loop` (after the current callback
    /// returns if `connect` is called on the loop). On success the connection is registered for
    /// reading with `handler` installed. If `timeout` is given and no address has connected by
    /// then (resolving included), the result is ETIMEDOUT. The failure is an ``IOError``, or an
    /// ``AddressRefusal`` when `admission` let no address through.
    ///
    /// The one exception to "called on `loop`": if the loop has already been shut down,
    /// `completion` is called at once on the calling thread with ESHUTDOWN, so nobody waits forever.
    public static func connect(
        host: String, port: Int, on loop: EventLoop, handler: any ConnectionHandler,
        timeout: Duration? = nil, admission: AddressAdmission = .any, resolver: HostResolver = .shared,
        completion: @escaping (Result<Connection, any Error>) -> Void
    ) {
        // Two transfers, not one holding a tuple: with Swift 6.3.1, destructuring
        // `let (handler, completion) = transfer.value` inside the closure over-released the
        // handler (use-after-free caught by AddressSanitizer in the tests).
        let handlerTransfer = UnsafeTransfer(value: handler)
        let completionTransfer = UnsafeTransfer(value: completion)
        let start: @Sendable () -> Void = {
            let attempt = ConnectAttempt(
                loop: loop, host: host, port: port, admission: admission, handler: handlerTransfer.value,
                completion: completionTransfer.value)
            attempt.start(resolver: resolver, timeout: timeout)
        }
        if loop.inEventLoop {
            start()
        } else if !loop.tryExecute(start) {
            completion(.failure(IOError(errno: ESHUTDOWN, reason: "event loop \(loop.name) is shut down")))
        }
    }
}

/// A connect in progress: owns a socket waiting for EPOLLOUT, then either becomes a
/// Connection (same fd and registration) or moves on to the next resolved address.
/// Loop-thread only (it lives in the loop's registration table while pending).
final class ConnectAttempt: Selectable {
    private let loop: EventLoop
    private let host: String
    private let port: Int
    private let target: String
    private let admission: AddressAdmission
    private var handler: (any ConnectionHandler)?
    private var completion: ((Result<Connection, any Error>) -> Void)?
    private var addresses: [SocketAddress] = []
    private var nextIndex = 0
    private var current: SocketAddress?
    private var fd: Int32 = -1
    private var registrationID: UInt64 = 0
    private var timer: TimerID?
    private var lastError: IOError?
    /// While the name is being resolved: the attempt's place in the loop's table (shutdown tells it).
    private var waitingID: UInt64 = 0

    init(
        loop: EventLoop, host: String, port: Int, admission: AddressAdmission, handler: any ConnectionHandler,
        completion: @escaping (Result<Connection, any Error>) -> Void
    ) {
        self.loop = loop
        self.host = host
        self.port = port
        target = "\(host):\(port)"
        self.admission = admission
        self.handler = handler
        self.completion = completion
    }

    /// Loop thread. The time limit runs from here: resolving is part of connecting.
    func start(resolver: HostResolver, timeout: Duration?) {
        if let timeout {
            timer = loop.schedule(after: timeout) { [self] in
                timer = nil
                fail(IOError(errno: ETIMEDOUT, reason: "connect to \(target)"))
            }
        }
        waitingID = loop.registerWaiter(self)
        resolver.resolve(host: host, port: port, on: loop) { [self] resolved in
            stopWaiting()
            guard completion != nil else { return }  // timed out or shut down meanwhile
            switch resolved {
            case .failure(let error):
                fail(error)
            case .success(let addresses):
                switch admission.admit(addresses, host: SocketAddress.unbracketed(host)) {
                case .failure(let refusal):
                    fail(refusal)
                case .success(let admitted):
                    self.addresses = admitted
                    tryNextAddress()
                }
            }
        }
    }

    private func tryNextAddress() {
        while nextIndex < addresses.count {
            let address = addresses[nextIndex]
            nextIndex += 1
            do throws(IOError) {
                fd = try Socket.makeTCP(family: address.family)
                try Socket.setNoDelay(fd)
                let rc = address.withSockAddr { Glibc.connect(fd, $0, $1) }
                let code = rc == 0 ? 0 : Glibc.errno
                // EINTR on a non-blocking connect means it carries on in the background, like
                // EINPROGRESS; calling connect again would only report EALREADY.
                guard code == 0 || code == EINPROGRESS || code == EINTR else {
                    throw IOError(errno: code, reason: "connect to \(address)")
                }
                registrationID = try loop.register(self, fd: fd, events: LinuxCalls.epollOut)
                current = address
                if code == 0 { succeed() }
                return
            } catch {
                lastError = error
                dropSocket()
            }
        }
        fail(lastError ?? IOError(errno: EADDRNOTAVAIL, reason: "connect to \(target): no address"))
    }

    func handleEvents(_ events: UInt32) {
        guard fd >= 0, let address = current else { return }
        let code = Socket.pendingError(fd)
        if code == 0 && events & (LinuxCalls.epollErr | LinuxCalls.epollHup) == 0 {
            succeed()
        } else {
            lastError = IOError(errno: code != 0 ? code : ECONNREFUSED, reason: "connect to \(address)")
            dropSocket()
            tryNextAddress()
        }
    }

    func closeForShutdown() {
        fail(IOError(errno: ECANCELED, reason: "connect to \(target): event loop shut down"))
    }

    private func succeed() {
        guard let address = current else { return }
        let connection = Connection(fd: fd, loop: loop, peer: address)
        do throws(IOError) {
            try connection.adopt(registrationID: registrationID)
        } catch {
            fail(error)
            return
        }
        fd = -1  // now owned by the connection
        registrationID = 0
        connection.handler = handler
        cancelTimer()
        finish(.success(connection))
    }

    private func fail(_ error: any Error) {
        stopWaiting()
        dropSocket()
        cancelTimer()
        finish(.failure(error))
    }

    private func stopWaiting() {
        guard waitingID != 0 else { return }
        loop.deregisterWaiter(id: waitingID)
        waitingID = 0
    }

    private func dropSocket() {
        guard fd >= 0 else { return }
        if registrationID != 0 { loop.deregister(id: registrationID, fd: fd) }
        closeDescriptor(fd)
        fd = -1
        registrationID = 0
        current = nil
    }

    private func cancelTimer() {
        if let timer { loop.cancelTimer(timer) }
        timer = nil
    }

    /// Exactly once; deferred so the completion never runs inside the caller's own callback.
    private func finish(_ result: Result<Connection, any Error>) {
        guard let completion else { return }
        self.completion = nil
        handler = nil
        loop.deferCallback { completion(result) }
    }
}
