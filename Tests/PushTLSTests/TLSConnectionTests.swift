import PushTLS
import Testing

@Suite("TLS connections pumped in memory")
struct TLSConnectionTests {
    static let certificate = Result {
        try SelfSignedCertificate.generate(commonName: "Pushgate test", subjectAltNames: ["127.0.0.1", "localhost"])
    }

    func serverContext(alpn: [String] = ["h2"], clientCAPEM: String? = nil) throws -> TLSContext {
        let certificate = try Self.certificate.get()
        return try TLSContext.server(
            certificatePEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM,
            alpn: alpn, clientCAPEM: clientCAPEM)
    }

    func clientContext(trusting caPEM: String? = nil, alpn: [String] = ["h2"]) throws -> TLSContext {
        try TLSContext.client(caPEM: caPEM ?? Self.certificate.get().certificatePEM, alpn: alpn, useSystemRoots: false)
    }

    @Test("ciphertext read in pieces into a caller's memory: what is left stays pending, in order")
    func readCiphertextInPieces() throws {
        let client = try TLSConnection(context: clientContext(), serverName: "127.0.0.1")
        try client.startHandshake()
        let pending = client.pendingCiphertextCount
        #expect(pending > 100)  // the ClientHello
        var pieces: [UInt8] = []
        var room = [UInt8](repeating: 0, count: 64)
        let first = room.withUnsafeMutableBytes { client.readCiphertext(into: $0) }
        #expect(first == 64)
        pieces += room
        #expect(client.pendingCiphertextCount == pending - 64)
        var rest: [UInt8] = []
        #expect(client.drainCiphertext(into: &rest) == pending - 64)
        pieces += rest
        #expect(client.pendingCiphertextCount == 0)
        // A TLS handshake record: type 22, then the version.
        #expect(pieces.count == pending && pieces[0] == 22 && pieces[1] == 3)
        #expect(room.withUnsafeMutableBytes { client.readCiphertext(into: $0) } == 0)
    }

    @Test("handshake over 127.0.0.1 negotiates h2 and moves 1 MiB each way")
    func handshakeAndBulkData() throws {
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext(), serverName: "127.0.0.1"),
            server: TLSConnection(context: serverContext()))
        try pair.pump()
        #expect(pair.client.handshakeComplete)
        #expect(pair.server.handshakeComplete)
        #expect(pair.client.negotiatedALPN == "h2")
        #expect(pair.server.negotiatedALPN == "h2")
        #expect(pair.client.protocolVersion == "TLSv1.3")

        let up = randomBytes(1 << 20)
        let down = randomBytes(1 << 20)
        try up.withUnsafeBytes { try pair.client.writePlaintext($0) }
        try down.withUnsafeBytes { try pair.server.writePlaintext($0) }
        try pair.pump()
        #expect(pair.serverReceived == up)
        #expect(pair.clientReceived == down)
    }

    @Test("the DNS name localhost verifies too")
    func localhostName() throws {
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext(), serverName: "localhost"),
            server: TLSConnection(context: serverContext()))
        try pair.pump()
        #expect(pair.client.handshakeComplete)
    }

    /// Collects what a connection hands it, record by record.
    final class RecordingSink: TLSCiphertextSink {
        var bytes: [UInt8] = []
        var records = 0

        override func send(_ ciphertext: UnsafeRawBufferPointer) {
            bytes += ciphertext
            records += 1
        }
    }

    @Test("records written for a sink go to it, never ahead of ciphertext still queued")
    func sinkTakesRecordsInOrder() throws {
        let client = try TLSConnection(context: clientContext(), serverName: "127.0.0.1")
        let server = try TLSConnection(context: serverContext())
        var pair = try InMemoryPair(client: client, server: server)
        try pair.pump()
        let sink = RecordingSink()
        // Queued first (the server's reply waits unread), then written for the sink: both go to
        // the queue, in order, since the sink's would overtake it.
        try Array("first".utf8).withUnsafeBytes { try client.writePlaintext($0) }
        let queued = client.pendingCiphertextCount
        #expect(queued > 0)
        try Array("second".utf8).withUnsafeBytes { try client.writePlaintext($0, sendingTo: sink) }
        #expect(sink.records == 0 && client.pendingCiphertextCount > queued)
        try pair.pump()
        #expect(String(decoding: pair.serverReceived, as: UTF8.self) == "firstsecond")
        // With nothing queued, a write's records (a large one spans several) go to the sink alone.
        let large = randomBytes(100_000)
        try large.withUnsafeBytes { try client.writePlaintext($0, sendingTo: sink) }
        #expect(client.pendingCiphertextCount == 0)
        #expect(sink.records >= 7)  // at most 16 KiB of plaintext a record
        sink.bytes.withUnsafeBytes { server.receive($0) }
        var received: [UInt8] = []
        _ = try server.readPlaintext(into: &received)
        #expect(received == large)
        // The sink is only for that call: later records are queued again.
        try Array("third".utf8).withUnsafeBytes { try client.writePlaintext($0) }
        #expect(client.pendingCiphertextCount > 0)
    }

    @Test("plaintext written before the handshake completes arrives, in order")
    func earlyPlaintext() throws {
        let client = try TLSConnection(context: clientContext(), serverName: "localhost")
        let server = try TLSConnection(context: serverContext())
        try Array("PRI * HTTP/2.0".utf8).withUnsafeBytes { try client.writePlaintext($0) }
        try Array(" then more".utf8).withUnsafeBytes { try client.writePlaintext($0) }
        try Array("server preface".utf8).withUnsafeBytes { try server.writePlaintext($0) }
        var pair = try InMemoryPair(client: client, server: server)
        try pair.pump()
        #expect(String(decoding: pair.serverReceived, as: UTF8.self) == "PRI * HTTP/2.0 then more")
        #expect(String(decoding: pair.clientReceived, as: UTF8.self) == "server preface")
    }

    @Test("an untrusted certificate fails verification with a clear error")
    func untrustedCertificate() throws {
        let other = try SelfSignedCertificate.generate(commonName: "other", subjectAltNames: ["localhost"])
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext(trusting: other.certificatePEM), serverName: "localhost"),
            server: TLSConnection(context: serverContext()))
        let error = try #require(throws: TLSError.self) { try pair.pump() }
        #expect(error.kind == .verification)
        #expect(error.message.contains("self-signed certificate"), "\(error)")
        #expect(!pair.client.handshakeComplete)
    }

    @Test("a hostname mismatch fails verification with a clear error")
    func hostnameMismatch() throws {
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext(), serverName: "api.push.apple.com"),
            server: TLSConnection(context: serverContext()))
        let error = try #require(throws: TLSError.self) { try pair.pump() }
        #expect(error.kind == .verification)
        #expect(error.message.contains("hostname mismatch"), "\(error)")
    }

    @Test("an IP address that is not in the certificate fails verification")
    func ipMismatch() throws {
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext(), serverName: "10.0.0.1"),
            server: TLSConnection(context: serverContext()))
        let error = try #require(throws: TLSError.self) { try pair.pump() }
        #expect(error.kind == .verification)
        #expect(error.message.contains("IP address mismatch"), "\(error)")
    }

    @Test("a server that does not offer h2 leaves negotiatedALPN nil")
    func noALPNMatch() throws {
        for serverALPN in [[], ["http/1.1"]] {
            var pair = try InMemoryPair(
                client: TLSConnection(context: clientContext(), serverName: "localhost"),
                server: TLSConnection(context: serverContext(alpn: serverALPN)))
            try pair.pump()
            #expect(pair.client.handshakeComplete)
            #expect(pair.client.negotiatedALPN == nil)
            #expect(pair.server.negotiatedALPN == nil)
        }
    }

    @Test("the server picks by its own preference among the client's offers")
    func serverPreference() throws {
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext(alpn: ["http/1.1", "h2"]), serverName: "localhost"),
            server: TLSConnection(context: serverContext(alpn: ["h2", "http/1.1"])))
        try pair.pump()
        #expect(pair.client.negotiatedALPN == "h2")
    }

    @Test("close_notify sets peerClosed and later writes throw")
    func closeNotify() throws {
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext(), serverName: "localhost"),
            server: TLSConnection(context: serverContext()))
        try pair.pump()
        try Array("last words".utf8).withUnsafeBytes { try pair.client.writePlaintext($0) }
        pair.client.shutdown()
        try pair.pump()
        #expect(String(decoding: pair.serverReceived, as: UTF8.self) == "last words")
        #expect(pair.server.peerClosed)
        #expect(!pair.client.peerClosed)
        let error = try #require(throws: TLSError.self) {
            try Array("x".utf8).withUnsafeBytes { try pair.client.writePlaintext($0) }
        }
        #expect(error.kind == .closed)
        pair.server.shutdown()
        try pair.pump()
        #expect(pair.client.peerClosed)
    }

    @Test("mTLS: a server with a client CA accepts a trusted client and rejects a certless one")
    func mutualTLS() throws {
        let clientIdentity = try SelfSignedCertificate.generate(commonName: "provider", subjectAltNames: [])
        let server = try serverContext(clientCAPEM: clientIdentity.certificatePEM)
        let withCertificate = try TLSContext.client(
            caPEM: Self.certificate.get().certificatePEM, useSystemRoots: false,
            certificateChainPEM: clientIdentity.certificatePEM, privateKeyPEM: clientIdentity.privateKeyPEM)
        var good = try InMemoryPair(
            client: TLSConnection(context: withCertificate, serverName: "localhost"),
            server: TLSConnection(context: server))
        try good.pump()
        try Array("hello".utf8).withUnsafeBytes { try good.client.writePlaintext($0) }
        try good.pump()
        #expect(good.serverReceived == Array("hello".utf8))

        var bad = try InMemoryPair(
            client: TLSConnection(context: clientContext(), serverName: "localhost"),
            server: TLSConnection(context: server))
        let error = try #require(throws: TLSError.self) { try bad.pump() }
        #expect(error.message.contains("certificate"), "\(error)")
    }

    @Test("connections refuse a context of the other role")
    func roleMismatch() throws {
        #expect(throws: TLSError.self) { try TLSConnection(context: serverContext(), serverName: "localhost") }
        #expect(throws: TLSError.self) { try TLSConnection(context: clientContext()) }
    }

    @Test("bad configuration fails with the file name and OpenSSL's reason")
    func badFiles() throws {
        let error = try #require(throws: TLSError.self) {
            try TLSContext.client(caFile: "/nonexistent/ca.pem")
        }
        #expect(error.kind == .configuration)
        #expect(error.message.contains("/nonexistent/ca.pem"))
        #expect(throws: TLSError.self) { try TLSContext.client(certificateChainFile: "/x.pem") }
        #expect(throws: TLSError.self) { try TLSContext.client(caPEM: "not a certificate") }
    }
}
