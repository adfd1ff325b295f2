import COpenSSL

/// One TLS session, sans-IO: ciphertext goes in with `receive` and comes out with
/// `drainCiphertext`; plaintext comes out with `readPlaintext` and goes in with `writePlaintext`.
/// The owner moves bytes between these calls and a socket; nothing here does I/O.
///
/// A typical loop turn: `receive` what the socket read, `readPlaintext` (this also drives the
/// handshake), hand the plaintext to HTTP/2, `writePlaintext` everything HTTP/2 produced in one
/// chunk, then `drainCiphertext` and send it. Draining once per turn lets many small frames share
/// few TLS records.
///
/// Not Sendable: a connection belongs to the one thread (event loop) that owns its socket.
/// After a thrown error the connection is dead; drain once more to send OpenSSL's alert, then close.
public final class TLSConnection {
    private let context: TLSContext
    private let ssl: OpaquePointer
    /// Ciphertext from the network, read by OpenSSL. Owned by `ssl` (SSL_set_bio).
    private let networkIn: OpaquePointer
    /// Ciphertext for the network: OpenSSL writes it through a ``CiphertextBIO`` (owned by
    /// `ssl`) into `outgoing`, or to a sink (``writePlaintext(_:sendingTo:)``).
    private var outgoing = OutgoingCiphertext()
    /// Plaintext accepted before the handshake finished (or after a write that wanted to wait);
    /// written, in order, before any newer plaintext.
    private var pendingPlaintext: [UInt8] = []
    /// The first fatal error; every later call that can throw rethrows it.
    private var failure: TLSError?
    private var closeNotifySent = false

    /// True once the handshake has finished (and, for clients, the server verified).
    public private(set) var handshakeComplete = false
    /// True once the peer's close_notify has been read. Our side may still write (TLS allows a
    /// half-close) until `shutdown()`.
    public private(set) var peerClosed = false

    /// A client connection. `serverName` is sent as SNI (unless it is an IP literal, which SNI
    /// forbids) and, when the context verifies peers, must match the server certificate (DNS or
    /// IP subjectAltName). With `serverName == nil` only the chain is verified.
    public convenience init(context: TLSContext, serverName: String?) throws(TLSError) {
        guard !context.isServer else {
            throw TLSError(.configuration, "a client connection needs a client TLSContext")
        }
        try self.init(context: context, role: .client)
        if let serverName, !serverName.isEmpty { try expect(serverName: serverName) }
    }

    /// A server connection; it waits for the client's hello.
    public convenience init(context: TLSContext) throws(TLSError) {
        guard context.isServer else {
            throw TLSError(.configuration, "a server connection needs a server TLSContext")
        }
        try self.init(context: context, role: .server)
    }

    private enum Role { case client, server }

    private init(context: TLSContext, role: Role) throws(TLSError) {
        guard let ssl = SSL_new(context.ctx) else { throw .openSSL(.configuration, "SSL_new failed") }
        guard let networkIn = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .openSSL(.configuration, "BIO_new failed")
        }
        switch role {
        case .client: SSL_set_connect_state(ssl)
        case .server: SSL_set_accept_state(ssl)
        }
        self.context = context  // keeps the SSL_CTX and its ALPN callback state alive
        self.ssl = ssl
        self.networkIn = networkIn
        guard let networkOut = CiphertextBIO.make(owner: self) else {
            BIO_free(networkIn)
            throw .openSSL(.configuration, "BIO_new failed")  // deinit frees ssl
        }
        // An empty memory BIO reports "retry" (not EOF), which SSL_read turns into WANT_READ.
        SSL_set_bio(ssl, networkIn, networkOut)
    }

    deinit {
        SSL_free(ssl)  // also frees both BIOs
        readScratch?.deallocate()
    }

    /// One TLS record's worth of room that `SSL_read_ex` decrypts into, made on the first read and
    /// kept, rather than growing the caller's array by a zero-filled record for every read and
    /// trimming it back: a request is a few hundred bytes, a record's room sixteen kilobytes.
    private var readScratch: UnsafeMutableRawPointer?
    private static let readChunk = 16 * 1024  // one maximum TLS record

    /// SNI and the name the certificate must carry.
    private func expect(serverName: String) throws(TLSError) {
        let isIPLiteral = Self.isIPLiteral(serverName)
        if !isIPLiteral {
            guard COpenSSL_SSL_set_tlsext_host_name(ssl, serverName) == 1 else {
                throw .openSSL(.configuration, "cannot set SNI \(serverName)")
            }
        }
        guard context.verifiesPeer else { return }
        if isIPLiteral {
            guard let param = SSL_get0_param(ssl), X509_VERIFY_PARAM_set1_ip_asc(param, serverName) == 1 else {
                throw .openSSL(.configuration, "cannot expect IP address \(serverName)")
            }
        } else {
            guard SSL_set1_host(ssl, serverName) == 1 else {
                throw .openSSL(.configuration, "cannot expect host name \(serverName)")
            }
            if let param = SSL_get0_param(ssl) {
                X509_VERIFY_PARAM_set_hostflags(param, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            }
        }
    }

    /// Whether OpenSSL parses `name` as an IPv4 or IPv6 address.
    private static func isIPLiteral(_ name: String) -> Bool {
        guard let octets = a2i_IPADDRESS(name) else {
            _ = drainOpenSSLErrorQueue()  // "not an address" leaves an entry we do not want
            return false
        }
        ASN1_OCTET_STRING_free(octets)
        return true
    }

    // MARK: Ciphertext

    /// Hands ciphertext read from the network to OpenSSL. Call `readPlaintext` afterwards.
    /// (A memory BIO can only fail to grow; that failure is reported by the next throwing call.)
    public func receive(_ ciphertext: UnsafeRawBufferPointer) {
        guard failure == nil, let base = ciphertext.baseAddress, !ciphertext.isEmpty else { return }
        var written = 0
        guard BIO_write_ex(networkIn, base, ciphertext.count, &written) == 1, written == ciphertext.count else {
            failure = .openSSL(.connection, "cannot buffer \(ciphertext.count) bytes of received ciphertext")
            return
        }
    }

    /// True when `drainCiphertext` would return bytes (handshake messages, records, alerts).
    public var hasPendingCiphertext: Bool { outgoing.count > 0 }

    /// How many ciphertext bytes OpenSSL has produced and not yet handed out.
    public var pendingCiphertextCount: Int { outgoing.count }

    /// Moves up to `buffer.count` pending ciphertext bytes into `buffer` (the socket's send queue:
    /// no array in between); returns how many. Still works after a failure, so a fatal alert
    /// can be sent before closing.
    public func readCiphertext(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        outgoing.take(into: buffer)
    }

    /// Appends every ciphertext byte OpenSSL has produced to `buffer`; returns how many.
    public func drainCiphertext(into buffer: inout [UInt8]) -> Int {
        let pending = pendingCiphertextCount
        guard pending > 0 else { return 0 }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: pending))
        let taken = buffer.withUnsafeMutableBytes { raw in
            readCiphertext(into: UnsafeMutableRawBufferPointer(rebasing: raw[start...]))
        }
        buffer.removeLast(pending - taken)
        return taken
    }

    // MARK: Handshake

    /// Clients: produce the ClientHello now so the first `drainCiphertext` has it to send.
    public func startHandshake() throws(TLSError) {
        guard !context.isServer else { throw TLSError(.configuration, "only clients start the handshake") }
        if let failure { throw failure }
        try advanceHandshake()
    }

    /// The protocol the server selected via ALPN, or nil when none was (a client that needs "h2"
    /// must treat nil, or anything else, as a failed connection).
    public var negotiatedALPN: String? {
        var data: UnsafePointer<UInt8>? = nil
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The negotiated protocol version, e.g. "TLSv1.3" (for logs).
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// The subject common name (CN) of the certificate the peer presented, or nil when it presented
    /// none (or it has no CN). On a server whose context requires client certificates (mTLS) the
    /// handshake only completes when that certificate verified, so after `handshakeComplete` this
    /// is a verified name.
    public var peerCertificateSubjectCommonName: String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        guard let subject = X509_get_subject_name(certificate) else { return nil }
        // First call for the length (without the terminating NUL), then the text.
        let length = X509_NAME_get_text_by_NID(subject, NID_commonName, nil, 0)
        guard length >= 0 else {
            _ = drainOpenSSLErrorQueue()
            return nil
        }
        var text = [CChar](repeating: 0, count: Int(length) + 1)
        guard X509_NAME_get_text_by_NID(subject, NID_commonName, &text, Int32(text.count)) >= 0 else {
            _ = drainOpenSSLErrorQueue()
            return nil
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the peer's certificate chain verified (`SSL_get_verify_result` is X509_V_OK and the
    /// peer presented one).
    public var peerCertificateVerified: Bool {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return false }
        X509_free(certificate)
        return SSL_get_verify_result(ssl) == X509_V_OK
    }

    private func advanceHandshake() throws(TLSError) {
        guard !handshakeComplete else { return }
        ERR_clear_error()  // SSL_get_error reads the queue; it must hold only this call's errors
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeComplete = true
            try flushPendingPlaintext()
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        case SSL_ERROR_ZERO_RETURN:
            peerClosed = true
            throw fail(.openSSL(.handshake, "peer closed the connection during the handshake"))
        case let code:
            throw fail(handshakeError(code))
        }
    }

    /// Names a failed handshake: certificate verification failures get OpenSSL's verify text
    /// ("certificate has expired", "hostname mismatch", …) in front of the queue text.
    private func handshakeError(_ code: Int32) -> TLSError {
        let verifyResult = SSL_get_verify_result(ssl)
        if verifyResult != X509_V_OK {
            let reason = String(cString: X509_verify_cert_error_string(verifyResult))
            return .openSSL(.verification, "certificate verification failed: \(reason) (X509 error \(verifyResult))")
        }
        return .openSSL(.handshake, "TLS handshake failed (\(Self.name(ofSSLError: code)))")
    }

    /// SSL_get_error's answer by name, for messages.
    private static func name(ofSSLError code: Int32) -> String {
        switch code {
        case SSL_ERROR_SSL: "SSL_ERROR_SSL"
        case SSL_ERROR_SYSCALL: "SSL_ERROR_SYSCALL"
        case SSL_ERROR_ZERO_RETURN: "SSL_ERROR_ZERO_RETURN"
        case SSL_ERROR_WANT_READ: "SSL_ERROR_WANT_READ"
        case SSL_ERROR_WANT_WRITE: "SSL_ERROR_WANT_WRITE"
        default: "SSL error \(code)"
        }
    }

    private func fail(_ error: TLSError) -> TLSError {
        failure = error
        return error
    }

    // MARK: Plaintext

    /// Decrypts everything `receive` has buffered and appends it to `buffer`; returns how many
    /// bytes were appended (0 while the handshake is still running or after the peer closed).
    /// Drives the handshake first, so call it after every `receive`.
    public func readPlaintext(into buffer: inout [UInt8]) throws(TLSError) -> Int {
        if let failure { throw failure }
        try advanceHandshake()
        guard handshakeComplete else { return 0 }
        try flushPendingPlaintext()
        let start = buffer.count
        let scratch =
            readScratch
            ?? {
                let made = UnsafeMutableRawPointer.allocate(byteCount: Self.readChunk, alignment: 16)
                readScratch = made
                return made
            }()
        while !peerClosed {
            var got = 0
            ERR_clear_error()
            let status = SSL_read_ex(ssl, scratch, Self.readChunk, &got)
            if status == 1 {
                buffer.append(contentsOf: UnsafeRawBufferPointer(start: scratch, count: got))
                continue
            }
            switch SSL_get_error(ssl, status) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return buffer.count - start
            case SSL_ERROR_ZERO_RETURN:
                peerClosed = true
            case let code:
                throw fail(.openSSL(.connection, "SSL_read failed (\(Self.name(ofSSLError: code)))"))
            }
        }
        return buffer.count - start
    }

    /// Encrypts `bytes` as ``writePlaintext(_:)`` does, handing the records made now straight to
    /// `sink` (a socket's send queue: no copy kept here in between) while nothing older is
    /// still waiting in this connection; anything else is kept for ``readCiphertext(into:)``.
    public func writePlaintext(_ bytes: UnsafeRawBufferPointer, sendingTo sink: TLSCiphertextSink) throws(TLSError) {
        directSink = Unmanaged.passUnretained(sink)
        defer { directSink = nil }
        try writePlaintext(bytes)
    }

    /// Where the BIO sends records during ``writePlaintext(_:sendingTo:)`` (unretained: only for
    /// that call, whose caller holds the sink).
    private var directSink: Unmanaged<TLSCiphertextSink>?

    /// A record OpenSSL wrote (``CiphertextBIO``): to the direct sink when there is one and it
    /// would not overtake queued bytes, else to the queue.
    func ciphertextWritten(_ record: UnsafeRawBufferPointer) {
        if let directSink, outgoing.count == 0 {
            directSink._withUnsafeGuaranteedRef { $0.send(record) }
        } else {
            outgoing.append(record)
        }
    }

    /// Encrypts `bytes` into TLS records (fetch them with `drainCiphertext`). Before the handshake
    /// completes the bytes are kept and written, in order, as soon as it does.
    public func writePlaintext(_ bytes: UnsafeRawBufferPointer) throws(TLSError) {
        if let failure { throw failure }
        guard !closeNotifySent else { throw TLSError(.closed, "cannot write after shutdown()") }
        guard !bytes.isEmpty else { return }
        if !handshakeComplete || !pendingPlaintext.isEmpty {
            pendingPlaintext.append(contentsOf: bytes)
            // Starts a client's handshake if the owner has not yet; a no-op while waiting to read.
            try advanceHandshake()
            if handshakeComplete { try flushPendingPlaintext() }
            return
        }
        let written = try encrypt(bytes)
        if written < bytes.count { pendingPlaintext.append(contentsOf: bytes[written...]) }
    }

    private func flushPendingPlaintext() throws(TLSError) {
        guard handshakeComplete, !pendingPlaintext.isEmpty else { return }
        let pending = pendingPlaintext
        pendingPlaintext = []
        // Array.withUnsafeBytes is untyped-rethrows, so carry the typed error out in a Result.
        let result = pending.withUnsafeBytes { raw in Result { () throws(TLSError) in try encrypt(raw) } }
        let written = try result.get()
        if written < pending.count { pendingPlaintext = Array(pending[written...]) }
    }

    /// SSL_write until all of `bytes` is encrypted or OpenSSL wants to wait; returns the count
    /// written. Every iteration either makes progress, returns, or throws: never spins.
    private func encrypt(_ bytes: UnsafeRawBufferPointer) throws(TLSError) -> Int {
        var offset = 0
        while offset < bytes.count {
            var written = 0
            ERR_clear_error()
            let status = SSL_write_ex(ssl, bytes.baseAddress! + offset, bytes.count - offset, &written)
            if status == 1 {
                guard written > 0 else {
                    throw fail(TLSError(.connection, "SSL_write reported success but wrote nothing"))
                }
                offset += written
                continue
            }
            switch SSL_get_error(ssl, status) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return offset  // the caller keeps the rest for the next readPlaintext
            case let code:
                throw fail(.openSSL(.connection, "SSL_write failed (\(Self.name(ofSSLError: code)))"))
            }
        }
        return offset
    }

    // MARK: Closing

    /// Queues our close_notify (fetch it with `drainCiphertext`). Plaintext still waiting for the
    /// handshake is dropped; before the handshake completes nothing is sent. Later writes throw.
    public func shutdown() {
        guard !closeNotifySent else { return }
        closeNotifySent = true
        guard failure == nil, handshakeComplete else { return }
        do { try flushPendingPlaintext() } catch { return }
        ERR_clear_error()
        // 0 means "sent, the peer's close_notify not yet seen", which is all we need.
        let status = SSL_shutdown(ssl)
        if status < 0 {
            let code = SSL_get_error(ssl, status)
            if code != SSL_ERROR_WANT_READ && code != SSL_ERROR_WANT_WRITE {
                failure = .openSSL(.connection, "SSL_shutdown failed (\(Self.name(ofSSLError: code)))")
            }
        }
    }
}
