import Glibc

/// A non-blocking TCP socket registered with one event loop for its whole life.
///
/// `@unchecked Sendable` so the object can be handed between threads, but it is confined to
/// `loop`'s thread: every method and property except `loop`, `remoteAddress` and
/// `isLoopbackPeer` must be used on that thread only (hop with `loop.execute`).
///
/// Output is batched: `write` only appends to the outbound buffer, and the loop flushes each
/// connection with pending output once per turn, after all events, tasks and timers, with one
/// sendmsg per up to 64 buffered chunks. We use sendmsg(MSG_NOSIGNAL) rather than
/// write/writev so a peer that went away yields EPIPE instead of killing the process with
/// SIGPIPE; the process signal disposition is left alone. What the kernel does not take stays
/// buffered and EPOLLOUT is armed until it drains.
public final class Connection: @unchecked Sendable {
    public let loop: EventLoop
    public var handler: (any ConnectionHandler)?
    /// "127.0.0.1:54321" / "[::1]:54321".
    public let remoteAddress: String
    public let isLoopbackPeer: Bool

    /// Per readable event we read until EAGAIN, but at most this much per turn so one busy
    /// peer cannot starve the others (level-triggered epoll reports the rest next turn).
    static let readBudgetPerTurn = 1024 * 1024

    private var fd: Int32
    private var registrationID: UInt64 = 0
    private var outbound = OutboundBuffer()
    private var closed = false
    private var readingPaused = false
    /// The peer sent its EOF and the handler kept the connection open to write: never read again.
    private var peerEnded = false
    /// EPOLLOUT is in the interest set (the kernel buffer was full at the last flush).
    private var waitingForWritable = false
    /// Already in the loop's flush queue for this turn.
    private var flushQueued = false

    init(fd: Int32, loop: EventLoop, peer: SocketAddress) {
        self.fd = fd
        self.loop = loop
        remoteAddress = peer.description
        isLoopbackPeer = peer.isLoopback
    }

    /// Adds the socket to the loop's epoll (reading).
    func register() throws(IOError) {
        registrationID = try loop.register(self, fd: fd, events: interest)
    }

    /// Takes over the registration of a finished connect (same fd, same id).
    func adopt(registrationID id: UInt64) throws(IOError) {
        registrationID = id
        loop.replace(id: id, with: self)
        try loop.modify(id: id, fd: fd, events: interest)
    }

    private var interest: UInt32 {
        (readingPaused ? 0 : LinuxCalls.epollIn) | (waitingForWritable ? LinuxCalls.epollOut : 0)
    }

    private func updateInterest() {
        do {
            try loop.modify(id: registrationID, fd: fd, events: interest)
        } catch {
            closeNow(error: error)
        }
    }

    // MARK: - Public API (loop thread)

    public var isClosed: Bool { closed }

    /// Bytes buffered and not yet taken by the kernel.
    public var pendingWriteBytes: Int { outbound.count }

    /// Bytes the kernel has taken from this connection so far: a peer whose count stops growing
    /// while bytes are pending does not read.
    public private(set) var bytesWritten = 0

    /// Appends to the outbound buffer; flushed at the end of the loop turn. Ignored after close.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        loop.preconditionInEventLoop()
        guard !closed, bytes.count > 0 else { return }
        outbound.append(bytes)
        // While EPOLLOUT is armed the kernel buffer is full; the writable event queues the flush.
        if !flushQueued && !waitingForWritable {
            flushQueued = true
            loop.enqueueFlush(self)
        }
    }

    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Lets `fill` write up to `capacity` bytes straight into the send queue and returns how many
    /// it wrote (nothing after close).
    @discardableResult
    public func write(capacity: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Int) -> Int {
        loop.preconditionInEventLoop()
        guard !closed, capacity > 0 else { return 0 }
        let written = outbound.append(capacity: capacity, fill)
        if written > 0 && !flushQueued && !waitingForWritable {
            flushQueued = true
            loop.enqueueFlush(self)
        }
        return written
    }

    /// Stops reading (EPOLLIN leaves the interest set) until `resumeReading`. Data stays in the
    /// kernel, so the peer is eventually throttled by TCP flow control.
    public func pauseReading() {
        loop.preconditionInEventLoop()
        guard !closed, !readingPaused else { return }
        readingPaused = true
        updateInterest()
    }

    /// Stops reading for good: the peer is done sending (a TLS close_notify read above TCP), and
    /// whatever it still sends is not read. ``resumeReading()`` does nothing from then on.
    public func stopReading() {
        loop.preconditionInEventLoop()
        peerEnded = true
        pauseReading()
    }

    public func resumeReading() {
        loop.preconditionInEventLoop()
        guard !closed, readingPaused, !peerEnded else { return }
        readingPaused = false
        updateInterest()
    }

    /// Closes for the handler: connectionDidClose(nil) follows once the current callback has
    /// returned, and nothing more is delivered. Idempotent.
    ///
    /// With `flushFirst` the socket lingers on its own after that, for at most ``lingerTimeout``:
    /// what is buffered goes out, then the write side is shut and input is read and dropped until
    /// the peer closes too. Closing at once would lose the tail of the output, and a socket closed
    /// with unread input sends an RST, which discards whatever the kernel had not yet transmitted
    /// (the last answers before a GOAWAY, say).
    public func close(flushFirst: Bool = true) {
        loop.preconditionInEventLoop()
        guard !closed else { return }
        guard flushFirst else {
            closeNow(error: nil)
            return
        }
        closed = true
        notifyClosed(error: nil)
        lingering = true
        readingPaused = false
        lingerTimer = loop.schedule(after: Self.lingerTimeout) { [self] in
            lingerTimer = nil
            closeNow(error: nil)
        }
        continueLingering()
    }

    /// How long a closed connection may still take to send its output and see the peer's close.
    public static let lingerTimeout: Duration = .seconds(2)

    private var lingering = false
    private var writeShut = false
    private var lingerTimer: TimerID?

    private func continueLingering() {
        guard fd >= 0 else { return }
        if !writeShut {
            switch writeOut() {
            case .drained:
                writeShut = true
                _ = Glibc.shutdown(fd, Int32(SHUT_WR))
                waitingForWritable = false
            case .blocked:
                waitingForWritable = true
            case .failed:
                closeNow(error: nil)
                return
            }
        }
        updateInterest()
    }

    /// Reads and drops what the peer still sends; its EOF (or an error) ends the linger.
    private func discardInput() {
        if readAvailable({ _ in true }) == .ended { closeNow(error: nil) }
    }

    private enum ReadStop { case blocked, budgetSpent, ended }

    /// Reads until EAGAIN, EOF or an error, or `readBudgetPerTurn` bytes, handing each read to
    /// `take` (which returns whether to go on): for the ends of a connection's life, where an
    /// error is not worth reporting.
    private func readAvailable(_ take: (UnsafeRawBufferPointer) -> Bool) -> ReadStop {
        let buffer = loop.readBuffer
        var budget = Self.readBudgetPerTurn
        while fd >= 0 && budget > 0 {
            guard
                let result = try? syscall(
                    "read from \(remoteAddress)", { Glibc.read(fd, buffer.baseAddress, buffer.count) })
            else { return .ended }
            switch result {
            case .wouldBlock:
                return .blocked
            case .processed(0):
                return .ended
            case .processed(let n):
                budget -= n
                guard take(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) else { return .blocked }
            }
        }
        return .budgetSpent
    }

    // MARK: - Loop callbacks

    /// Removes from epoll and closes the descriptor once; the handler is told (deferred) unless
    /// ``close(flushFirst:)`` already did.
    func closeNow(error: IOError?) {
        guard fd >= 0 else { return }
        let notify = !closed
        closed = true
        if let lingerTimer {
            loop.cancelTimer(lingerTimer)
            self.lingerTimer = nil
        }
        loop.deregister(id: registrationID, fd: fd)
        closeDescriptor(fd)
        fd = -1
        outbound.removeAll()
        if notify { notifyClosed(error: error) }
    }

    private func notifyClosed(error: IOError?) {
        // The deferred closure keeps `self` alive until the handler has been told.
        loop.deferCallback { [self] in
            let handler = self.handler
            self.handler = nil
            handler?.connectionDidClose(self, error: error)
        }
    }

    /// Called by the loop at the end of the turn.
    func flushNow() {
        flushQueued = false
        guard !closed, !outbound.isEmpty else { return }
        switch writeOut() {
        case .drained:
            if waitingForWritable {
                waitingForWritable = false
                updateInterest()
            }
            if !closed { handler?.connectionDidDrain(self) }
        case .blocked:
            if !waitingForWritable {
                waitingForWritable = true
                updateInterest()
            }
        case .failed(let error):
            // A peer that closes with our requests unread resets the connection, but what it
            // answered before is still in the kernel: hand that over before reporting the error
            // (an HTTP/2 client would otherwise resend requests that were answered).
            drainInput()
            closeNow(error: error)
        }
    }

    /// Delivers what the kernel still holds for reading, at most `readBudgetPerTurn`, ignoring
    /// EOF and errors (the caller is closing anyway). Not while reading is paused: the handler
    /// asked for nothing more.
    private func drainInput() {
        guard !closed && !readingPaused else { return }
        _ = readAvailable { bytes in
            handler?.connection(self, didReceive: bytes)
            return !closed && !readingPaused
        }
    }

    private enum WriteOutcome {
        case drained, blocked
        case failed(IOError)
    }

    /// Sends until the buffer is empty or the kernel stops taking data.
    private func writeOut() -> WriteOutcome {
        while !outbound.isEmpty {
            let (entries, bytes) = outbound.gather(into: loop.iovecs)
            var message = msghdr()
            message.msg_iov = loop.iovecs.baseAddress
            message.msg_iovlen = entries
            let result: IOResult<Int>
            do {
                result = try syscall("sendmsg to \(remoteAddress)") {
                    sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                }
            } catch {
                return .failed(error)
            }
            switch result {
            case .wouldBlock:
                return .blocked
            case .processed(let written):
                outbound.consume(written)
                bytesWritten &+= written
                // A short write means the socket buffer is full: don't spend a syscall on EAGAIN.
                if written < bytes { return outbound.isEmpty ? .drained : .blocked }
            }
        }
        return .drained
    }

    private func readNow() {
        let buffer = loop.readBuffer
        var budget = Self.readBudgetPerTurn
        while !closed && !readingPaused && budget > 0 {
            let result: IOResult<Int>
            do {
                result = try syscall("read from \(remoteAddress)") {
                    Glibc.read(fd, buffer.baseAddress, buffer.count)
                }
            } catch {
                closeNow(error: error)
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .processed(0):
                // The peer's EOF: a close, unless the handler still has answers to write.
                if handler?.connectionDidReceiveEnd(self) == true, !closed {
                    peerEnded = true
                    readingPaused = true
                    updateInterest()
                } else {
                    closeNow(error: nil)
                }
                return
            case .processed(let n):
                budget -= n
                handler?.connection(self, didReceive: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                // A short read drained the socket; level-triggered epoll tells us if more comes,
                // so skip the extra read that would only return EAGAIN.
                if n < buffer.count { return }
            }
        }
    }

    private func socketError() -> IOError {
        let code = Socket.pendingError(fd)
        return IOError(errno: code != 0 ? code : EPIPE, reason: "connection to \(remoteAddress)")
    }
}

extension Connection: Selectable {
    func handleEvents(_ events: UInt32) {
        if lingering {
            if events & LinuxCalls.epollOut != 0 { continueLingering() }
            if events & (LinuxCalls.epollIn | LinuxCalls.epollErr | LinuxCalls.epollHup) != 0 { discardInput() }
            return
        }
        guard !closed else { return }
        let errorOrHangup = events & (LinuxCalls.epollErr | LinuxCalls.epollHup) != 0
        if !readingPaused && (events & LinuxCalls.epollIn != 0 || errorOrHangup) {
            // Reading delivers any remaining data first, then EOF or the socket error.
            readNow()
        }
        if !closed && errorOrHangup && (readingPaused || events & LinuxCalls.epollErr != 0) {
            // ERR/HUP are reported even without interest; with reading paused (or an error
            // the read did not surface) ignoring them would spin the loop.
            closeNow(error: socketError())
            return
        }
        if !closed && events & LinuxCalls.epollOut != 0 && !flushQueued {
            flushQueued = true
            loop.enqueueFlush(self)
        }
    }

    /// The loop is ending: one attempt to send what is buffered, no lingering (no timer would run).
    func closeForShutdown() {
        if fd >= 0 && !writeShut && !outbound.isEmpty { _ = writeOut() }
        closeNow(error: nil)
    }
}
