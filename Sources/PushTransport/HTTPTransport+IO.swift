import PushHTTP1
import PushHTTP2
public import PushPosix
import PushTLS

// The transport's I/O: socket events in, the session's bytes out (through TLS when it has it).
extension HTTPTransport {
    // MARK: Socket events

    public func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        guard !isClosed else { return }
        lastReceivedAt = loop.now
        guard let tls else {
            if serverChooser != nil {
                sniff(bytes)
            } else {
                feedSession(bytes)
            }
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
            if let chooser {
                do {
                    try choose(tls.negotiatedALPN, chooser)
                } catch {
                    fail(error)
                    return
                }
            } else if serverChooser != nil {
                do {
                    try chooseServerSession(tls.negotiatedALPN == "h2" ? .http2 : .http1)
                } catch {
                    fail(error)
                    return
                }
            } else if http1ServerSession != nil {
                if let alpn = tls.negotiatedALPN, alpn != "http/1.1" {
                    fail(TransportError("the client chose \(alpn) by ALPN, but this server speaks HTTP/1.1"))
                    return
                }
            } else if tls.negotiatedALPN != "h2" {
                fail(TransportError("the peer did not agree to HTTP/2 (ALPN h2) in the TLS handshake"))
                return
            }
            becomeReady()
        }
        if !plaintextIn.isEmpty {
            plaintextIn.withUnsafeBytes { feedSession($0) }
        }
        if tls.peerClosed && !isClosed {
            if answersAfterEnd() {
                connection.stopReading()
                setNeedsFlush()
                return
            }
            if let http1 {
                do {
                    try http1.receiveEnd()
                } catch {
                    closeError = closeError ?? error
                }
            }
            close(flushFirst: true, error: closeError)
            return
        }
        setNeedsFlush()
    }

    /// The client's EOF while we serve HTTP/1.1: a half-close. The requests it sent are answered,
    /// then the connection closes (``flush()``), as RFC 9112 §9.6 has a client shut its sending
    /// side and wait; a client that closed both sides makes the first write fail, which closes it.
    public func connectionDidReceiveEnd(_ connection: Connection) -> Bool {
        guard !isClosed else { return false }
        return answersAfterEnd()
    }

    /// Tells a server HTTP/1.1 session that its client is done sending: true if answers are still
    /// to be written (the connection stays open for them).
    private func answersAfterEnd() -> Bool {
        guard let server = http1ServerSession, isReady else { return false }
        do {
            try server.receiveEnd()
        } catch {
            closeError = closeError ?? error
            return false
        }
        guard server.wantsRead || server.wantsWrite else { return false }
        setNeedsFlush()
        return true
    }

    public func connectionDidDrain(_ connection: Connection) {
        if readingPaused {
            readingPaused = false
            if !pipelinePaused { connection.resumeReading() }
        }
        // Only when output is waiting: flushing after every drained write cost each write an
        // extra loop turn (an `epoll_wait` that finds nothing) and an empty pass through nghttp2.
        if outputHeldBack || (!isClosed && sessionWantsWrite) { setNeedsFlush() }
    }

    public func connectionDidClose(_ connection: Connection, error: IOError?) {
        if error == nil, closeError == nil, !isClosed, let http1 {
            // The peer's close may end an answer (a body read until the close), or cut one off.
            do {
                try http1.receiveEnd()
            } catch {
                closeError = error
            }
        }
        isClosed = true
        notifyClosed(closeError ?? error)
    }

    func notifyClosed(_ error: (any Error)?) {
        let owner = self.owner
        self.owner = nil
        // The session holds its delegate (the owner, or one the owner made) strongly: the cycle
        // ends with the connection, as the owner's does. A closed connection hears nothing more.
        session?.delegate = nil
        owner?.transport(self, didCloseWith: error)
    }

    // MARK: Internals

    private func choose(_ alpn: String?, _ chooser: VersionChooser) throws {
        self.chooser = nil
        switch (alpn, chooser.policy) {
        case ("h2", .auto), ("h2", .http2):
            session = try HTTP2Session(role: .client, settings: chooser.http2Settings, delegate: chooser.http2Delegate)
        case ("http/1.1", .auto), ("http/1.1", .http1), (nil, .auto), (nil, .http1):
            let client = HTTP1ClientSession()
            client.delegate = chooser.http1Delegate
            http1Session = client
            http1 = client
        case (nil, .http2), ("http/1.1", .http2):
            throw TransportError("the peer did not agree to HTTP/2 (ALPN h2) in the TLS handshake")
        case (let other?, _):
            throw TransportError("the server chose \(other.debugDescription) by ALPN, which this client did not offer")
        }
    }

    /// Makes the server session for `version` with the chooser (which is used once).
    private func chooseServerSession(_ version: HTTPVersion) throws {
        guard let serverChooser else { return }
        self.serverChooser = nil
        switch try serverChooser(self, version) {
        case .http2(let settings, let delegate):
            session = try HTTP2Session(role: .server, settings: settings, delegate: delegate)
        case .http1(let server):
            http1ServerSession = server
            http1 = server
        }
    }

    /// Cleartext, version not chosen yet: keeps the first bytes until they tell the version, then
    /// makes the session and gives it all of them.
    private func sniff(_ bytes: UnsafeRawBufferPointer) {
        sniffed.append(contentsOf: bytes)
        guard let version = HTTPVersionSniffer.version(of: sniffed) else { return }
        do {
            try chooseServerSession(version)
        } catch {
            fail(error)
            return
        }
        becomeReady()
        let first = sniffed
        sniffed = []
        first.withUnsafeBytes { feedSession($0) }
    }

    private var sessionWantsRead: Bool { session?.wantsRead ?? http1?.wantsRead ?? true }
    private var sessionWantsWrite: Bool { session?.wantsWrite ?? http1?.wantsWrite ?? false }

    /// What the session has to send: into `plaintextOut`, or over h2c straight into the socket's
    /// send queue (one copy of every frame instead of two).
    private func drainSession(maxBytes: Int) throws -> Int {
        if let session {
            if tls == nil, let connection {
                return try session.drainOutput(maxBytes: maxBytes) { connection.write($0) }
            }
            return try session.drainOutput(into: &plaintextOut, maxBytes: maxBytes)
        }
        return http1?.drainOutput(into: &plaintextOut, maxBytes: maxBytes) ?? 0
    }

    func becomeReady() {
        isReady = true
        owner?.transportDidBecomeReady(self)
    }

    private func feedSession(_ bytes: UnsafeRawBufferPointer) {
        receiving = true
        defer { receiving = false }
        do {
            if let session {
                try session.receive(bytes)
            } else if let http1 {
                try http1.receive(bytes)
                if let server = http1ServerSession, server.isBackedUp, !pipelinePaused {
                    // At its limit inside this read: no more reads until answers go out (the
                    // rest of this one waits in the session).
                    pipelinePaused = true
                    connection?.pauseReading()
                }
            }
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

    func flush() {
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
            if try drainSession(maxBytes: outputHighWaterMark) >= outputHighWaterMark {
                outputHeldBack = true
            }
            if !resetsAfterFlush.isEmpty {
                for streamID in resetsAfterFlush {
                    try? session.resetStream(streamID: streamID, errorCode: .noError)
                }
                resetsAfterFlush.removeAll()
                _ = try drainSession(maxBytes: outputHighWaterMark)
            }
            if let tls {
                if !plaintextOut.isEmpty { try write(plaintextOut, to: tls, on: connection) }
                Self.sendCiphertext(of: tls, on: connection)
            } else if !plaintextOut.isEmpty {
                connection.write(plaintextOut)
            }
        } catch {
            fail(error)
            return
        }
        onFlushed?()
        if let server = http1ServerSession, !readingPaused {
            if !server.isBackedUp && server.heldBytes > 0 && server.failure == nil {
                // Requests held when it backed up: their turn now (answers they get at once
                // are written by the flush this asks for).
                receiving = true
                try? server.resume()
                receiving = false
                if closeAfterReceive {
                    close(flushFirst: true, error: closeError)
                    return
                }
                setNeedsFlush()
            }
            let paused = server.isBackedUp || server.heldBytes > 0
            if paused != pipelinePaused {
                pipelinePaused = paused
                if paused { connection.pauseReading() } else { connection.resumeReading() }
            }
        }
        if isReady && !sessionWantsRead && !sessionWantsWrite {
            close(flushFirst: true)
        }
    }

    /// Moves what TLS has produced straight into the socket's send queue.
    static func sendCiphertext(of tls: TLSConnection, on connection: Connection) {
        let pending = tls.pendingCiphertextCount
        if pending > 0 { connection.write(capacity: pending) { tls.readCiphertext(into: $0) } }
    }

    private func write(_ plaintext: [UInt8], to tls: TLSConnection, on connection: Connection) throws(TLSError) {
        var failure: TLSError?
        sendQueue.connection = Unmanaged.passUnretained(connection)
        defer { sendQueue.connection = nil }
        plaintext.withUnsafeBytes { bytes in
            do throws(TLSError) {
                try tls.writePlaintext(bytes, sendingTo: sendQueue)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    func fail(_ error: any Error) {
        closeError = closeError ?? error
        // Send what TLS has queued (an alert) before closing.
        if let tls, let connection {
            Self.sendCiphertext(of: tls, on: connection)
        }
        close(flushFirst: true, error: error)
    }
}

/// A socket's send queue as the sink of a flush's TLS records (``TLSCiphertextSink``).
final class SendQueueSink: TLSCiphertextSink {
    /// Set for the one `writePlaintext` call (unretained: the transport holds its connection).
    var connection: Unmanaged<Connection>?

    override func send(_ ciphertext: UnsafeRawBufferPointer) {
        connection?._withUnsafeGuaranteedRef { $0.write(ciphertext) }
    }
}
