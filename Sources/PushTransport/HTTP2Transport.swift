import PushHTTP2
import PushPosix
import PushTLS

/// What the owner of an ``HTTP2Transport`` hears besides HTTP/2 events (which go to the session's
/// delegate).
public protocol HTTP2TransportOwner: AnyObject {
    /// The transport can carry HTTP/2: at once for cleartext, after the TLS handshake (with ALPN h2
    /// agreed) otherwise.
    func transportDidBecomeReady(_ transport: HTTP2Transport)
    /// The socket is closed. `error` says why when it was not a clean close.
    func transport(_ transport: HTTP2Transport, didCloseWith error: (any Error)?)
}

/// Why a transport gave up.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// HTTP/2, over TLS or cleartext, on one socket: bytes from the socket go through TLS into the
/// nghttp2 session; frames from the session go through TLS to the socket.
///
/// Output is batched per loop turn: ``setNeedsFlush()`` asks for one flush at the end of the turn,
/// so every frame produced in the turn becomes one plaintext chunk, a few TLS records and one
/// socket write. Confined to its connection's loop (hence `@unchecked Sendable`).
public final class HTTP2Transport: ConnectionHandler, @unchecked Sendable {
    public let loop: EventLoop
    /// nil until a client connection is established.
    public private(set) var connection: Connection?
    public private(set) var session: HTTP2Session!
    /// Held strongly until the transport closes (the loop keeps the connection, the connection its
    /// handler, this transport, and so the owner alive); released after `didCloseWith`.
    public private(set) var owner: (any HTTP2TransportOwner)?
    /// Unsent bytes buffered for the peer before the transport stops producing (and reading).
    public var outputHighWaterMark = 4 << 20
    public private(set) var isReady = false
    public private(set) var isClosed = false
    /// When bytes last arrived (the loop's monotonic nanoseconds): liveness checks compare it with
    /// the time a PING was sent.
    public private(set) var lastReceivedAt: UInt64 = 0

    private let tls: TLSConnection?
    private var plaintextIn: [UInt8] = []
    private var plaintextOut: [UInt8] = []
    private var ciphertextOut: [UInt8] = []
    /// nghttp2 cannot produce output from inside its callbacks, so flushes wait until it returns.
    private var receiving = false
    private var flushScheduled = false
    private var readingPaused = false
    /// The last flush left output in the session because of `outputHighWaterMark`: the next drain
    /// of the socket must flush again.
    private var outputHeldBack = false
    private var closeError: (any Error)?
    /// ``flushAndClose(error:)`` was asked for while the session was receiving.
    private var closeAfterReceive = false
    /// Streams to reset with NO_ERROR once what was submitted for them is serialized.
    private var resetsAfterFlush: [Int32] = []

    /// A transport over an accepted connection (server role) or, before `attach`, for a connect.
    public init(
        loop: EventLoop, tls: TLSConnection?, role: HTTP2Session.Role, settings: HTTP2Settings,
        sessionDelegate: any HTTP2SessionDelegate, owner: any HTTP2TransportOwner
    ) throws(HTTP2Error) {
        self.loop = loop
        self.tls = tls
        self.owner = owner
        session = try HTTP2Session(role: role, settings: settings, delegate: sessionDelegate)
        plaintextOut.reserveCapacity(64 * 1024)
    }

    /// Starts using `connection` (the one accepted, or the one `connect` produced).
    public func attach(_ connection: Connection) {
        self.connection = connection
        lastReceivedAt = loop.now
        connection.handler = self
        if let tls {
            do {
                if case .client = session.role { try tls.startHandshake() }
            } catch {
                fail(error)
                return
            }
        } else {
            becomeReady()
        }
        setNeedsFlush()
    }

    /// Response or request bytes produced for the peer and not yet taken by the kernel: body bytes
    /// still queued in the session (waiting for the peer's flow-control window) and bytes in the
    /// socket's send buffer.
    public var unsentBytes: Int { session.queuedBodyBytes + (connection?.pendingWriteBytes ?? 0) }

    /// Grows whenever the peer takes output: body bytes framed (its window let them go) or bytes
    /// written to the socket. Unchanged while ``unsentBytes`` stays above 0: the peer reads nothing.
    public var outputProgress: Int { session.framedBodyBytes &+ (connection?.bytesWritten ?? 0) }

    /// Connects to `host:port` and attaches; `completion` runs on `loop` with the transport or the
    /// reason it could not connect. Readiness (TLS done) is reported to the owner separately.
    public func connect(
        host: String, port: Int, timeout: Duration, completion: @escaping (Result<Void, IOError>) -> Void
    ) {
        Connection.connect(host: host, port: port, on: loop, handler: self, timeout: timeout) { [self] result in
            switch result {
            case .success(let connection):
                guard !isClosed else {
                    // Closed while connecting: drop the socket that arrived too late.
                    connection.close(flushFirst: false)
                    return
                }
                attach(connection)
                completion(.success(()))
            case .failure(let error):
                isClosed = true
                completion(.failure(error))
            }
        }
    }

    /// Asks for one flush at the end of this loop turn.
    public func setNeedsFlush() {
        guard !flushScheduled, !isClosed else { return }
        flushScheduled = true
        loop.executeAtEndOfTurn { [self] in
            flushScheduled = false
            flush()
        }
    }

    /// Resets `streamID` with NO_ERROR right after the frames already submitted for it are written:
    /// the way a server stops a client's upload after answering early (a reset submitted at once
    /// would make nghttp2 drop the answer).
    public func resetAfterFlush(_ streamID: Int32) {
        resetsAfterFlush.append(streamID)
        setNeedsFlush()
    }

    /// Serializes what the session holds now (a GOAWAY just submitted, say) and closes, with one
    /// attempt to send it all: for giving up on a peer that may not take it.
    public func flushAndClose(error: (any Error)? = nil) {
        guard !receiving else {
            // Inside the session's callbacks nothing can be serialized: right after them.
            closeAfterReceive = true
            closeError = closeError ?? error
            return
        }
        flush()
        close(flushFirst: true, error: error)
    }

    /// Closes: TLS close_notify and what is buffered go out first when `flushFirst`.
    public func close(flushFirst: Bool = true, error: (any Error)? = nil) {
        guard !isClosed else { return }
        isClosed = true
        closeError = closeError ?? error
        guard let connection else {
            notifyClosed(closeError)
            return
        }
        if flushFirst, let tls {
            tls.shutdown()
            ciphertextOut.removeAll(keepingCapacity: true)
            _ = tls.drainCiphertext(into: &ciphertextOut)
            if !ciphertextOut.isEmpty { connection.write(ciphertextOut) }
        }
        connection.close(flushFirst: flushFirst)
    }

    // MARK: Socket events

    public func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        guard !isClosed else { return }
        lastReceivedAt = loop.now
        guard let tls else {
            feedSession(bytes)
            return
        }
        tls.receive(bytes)
        plaintextIn.removeAll(keepingCapacity: true)
        do {
            _ = try tls.readPlaintext(into: &plaintextIn)
        } catch {
            fail(error)
            return
        }
        if !isReady && tls.handshakeComplete {
            guard tls.negotiatedALPN == "h2" else {
                fail(TransportError("the peer did not agree to HTTP/2 (ALPN h2) in the TLS handshake"))
                return
            }
            becomeReady()
        }
        if !plaintextIn.isEmpty {
            plaintextIn.withUnsafeBytes { feedSession($0) }
        }
        if tls.peerClosed && !isClosed {
            close(flushFirst: true)
            return
        }
        setNeedsFlush()
    }

    public func connectionDidDrain(_ connection: Connection) {
        if readingPaused {
            readingPaused = false
            connection.resumeReading()
        }
        // Only when output is waiting: flushing after every drained write cost each write an
        // extra loop turn (an `epoll_wait` that finds nothing) and an empty pass through nghttp2.
        if outputHeldBack || (!isClosed && session.wantsWrite) { setNeedsFlush() }
    }

    public func connectionDidClose(_ connection: Connection, error: IOError?) {
        isClosed = true
        notifyClosed(closeError ?? error)
    }

    private func notifyClosed(_ error: (any Error)?) {
        let owner = self.owner
        self.owner = nil
        owner?.transport(self, didCloseWith: error)
    }

    // MARK: Internals

    private func becomeReady() {
        isReady = true
        owner?.transportDidBecomeReady(self)
    }

    private func feedSession(_ bytes: UnsafeRawBufferPointer) {
        receiving = true
        defer { receiving = false }
        do {
            try session.receive(bytes)
        } catch {
            // A connection-level protocol error: nghttp2 has queued a GOAWAY; send it, then close.
            receiving = false
            closeError = error
            flush()
            close(flushFirst: true, error: error)
            return
        }
        if closeAfterReceive {
            receiving = false
            flush()
            close(flushFirst: true, error: closeError)
            return
        }
        setNeedsFlush()
    }

    private func flush() {
        guard !isClosed, !receiving, let connection else { return }
        outputHeldBack = false
        if connection.pendingWriteBytes >= outputHighWaterMark {
            // The peer does not read what we send: stop reading from it too, until it drains.
            outputHeldBack = true
            if !readingPaused {
                readingPaused = true
                connection.pauseReading()
            }
            return
        }
        do {
            plaintextOut.removeAll(keepingCapacity: true)
            if try session.drainOutput(into: &plaintextOut, maxBytes: outputHighWaterMark) >= outputHighWaterMark {
                outputHeldBack = true
            }
            if !resetsAfterFlush.isEmpty {
                for streamID in resetsAfterFlush {
                    try? session.resetStream(streamID: streamID, errorCode: .noError)
                }
                resetsAfterFlush.removeAll()
                try session.drainOutput(into: &plaintextOut, maxBytes: outputHighWaterMark)
            }
            if let tls {
                if !plaintextOut.isEmpty { try write(plaintextOut, to: tls) }
                ciphertextOut.removeAll(keepingCapacity: true)
                _ = tls.drainCiphertext(into: &ciphertextOut)
                if !ciphertextOut.isEmpty { connection.write(ciphertextOut) }
            } else if !plaintextOut.isEmpty {
                connection.write(plaintextOut)
            }
        } catch {
            fail(error)
            return
        }
        if isReady && !session.wantsRead && !session.wantsWrite {
            close(flushFirst: true)
        }
    }

    private func write(_ plaintext: [UInt8], to tls: TLSConnection) throws(TLSError) {
        var failure: TLSError?
        plaintext.withUnsafeBytes { bytes in
            do throws(TLSError) {
                try tls.writePlaintext(bytes)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    private func fail(_ error: any Error) {
        closeError = closeError ?? error
        // Send what TLS has queued (an alert) before closing.
        if let tls, let connection {
            ciphertextOut.removeAll(keepingCapacity: true)
            _ = tls.drainCiphertext(into: &ciphertextOut)
            if !ciphertextOut.isEmpty { connection.write(ciphertextOut) }
        }
        close(flushFirst: true, error: error)
    }
}
