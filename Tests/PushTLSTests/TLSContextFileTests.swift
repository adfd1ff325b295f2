import PushTLS
import PushTestSupport
import Testing

@Suite("TLS contexts from files and edge cases")
struct TLSContextFileTests {
    @Test("server and client contexts load PEM files (including a client identity)")
    func fromFiles() throws {
        let server = try SelfSignedCertificate.generate(commonName: "mock APNs", subjectAltNames: ["localhost"])
        let client = try SelfSignedCertificate.generate(commonName: "provider cert", subjectAltNames: [])
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let serverContext = try TLSContext.server(
            certificateChainFile: directory.write("server.pem", server.certificatePEM),
            privateKeyFile: directory.write("server.key", server.privateKeyPEM),
            clientCAFile: directory.write("client-ca.pem", client.certificatePEM))
        let clientContext = try TLSContext.client(
            caFile: directory.write("ca.pem", server.certificatePEM),
            certificateChainFile: directory.write("client.pem", client.certificatePEM),
            privateKeyFile: directory.write("client.key", client.privateKeyPEM))
        var pair = try InMemoryPair(
            client: TLSConnection(context: clientContext, serverName: "localhost"),
            server: TLSConnection(context: serverContext))
        try pair.pump()
        #expect(pair.client.handshakeComplete && pair.server.handshakeComplete)
        #expect(pair.client.negotiatedALPN == "h2")
    }

    @Test("a key that does not match the certificate is refused")
    func mismatchedKey() throws {
        let one = try SelfSignedCertificate.generate(commonName: "one", subjectAltNames: ["localhost"])
        let two = try SelfSignedCertificate.generate(commonName: "two", subjectAltNames: ["localhost"])
        let error = try #require(throws: TLSError.self) {
            try TLSContext.server(certificatePEM: one.certificatePEM, privateKeyPEM: two.privateKeyPEM)
        }
        #expect(error.kind == .certificate)
        #expect(error.message.contains("private key") && error.message.contains("mismatch"), "\(error)")
    }

    @Test("verifyPeer: false accepts an untrusted certificate")
    func noVerification() throws {
        let untrusted = try SelfSignedCertificate.generate(commonName: "x", subjectAltNames: ["localhost"])
        var pair = try InMemoryPair(
            client: TLSConnection(context: TLSContext.client(verifyPeer: false), serverName: "wrong.example"),
            server: TLSConnection(
                context: TLSContext.server(
                    certificatePEM: untrusted.certificatePEM, privateKeyPEM: untrusted.privateKeyPEM)))
        try pair.pump()
        #expect(pair.client.handshakeComplete)
    }

    @Test("system roots plus an extra CA still trust the extra CA")
    func systemRootsAndExtraCA() throws {
        let certificate = try SelfSignedCertificate.generate(commonName: "x", subjectAltNames: ["127.0.0.1"])
        var pair = try InMemoryPair(
            client: TLSConnection(
                context: TLSContext.client(caPEM: certificate.certificatePEM), serverName: "127.0.0.1"),
            server: TLSConnection(
                context: TLSContext.server(
                    certificatePEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)))
        try pair.pump()
        #expect(pair.client.handshakeComplete)
    }

    @Test("corrupted ciphertext fails the connection instead of looping, and the error sticks")
    func corruptedRecord() throws {
        let certificate = try SelfSignedCertificate.generate(commonName: "x", subjectAltNames: ["localhost"])
        var pair = try InMemoryPair(
            client: TLSConnection(
                context: TLSContext.client(caPEM: certificate.certificatePEM, useSystemRoots: false),
                serverName: "localhost"),
            server: TLSConnection(
                context: TLSContext.server(
                    certificatePEM: certificate.certificatePEM, privateKeyPEM: certificate.privateKeyPEM)))
        try pair.pump()
        try Array(repeating: UInt8(7), count: 1000).withUnsafeBytes { try pair.client.writePlaintext($0) }
        var wire: [UInt8] = []
        #expect(pair.client.drainCiphertext(into: &wire) > 1000)
        wire[wire.count - 20] ^= 0xFF
        wire.withUnsafeBytes { pair.server.receive($0) }
        var plaintext: [UInt8] = []
        let error = try #require(throws: TLSError.self) { try pair.server.readPlaintext(into: &plaintext) }
        #expect(error.kind == .connection)
        #expect(error.message.contains("SSL_read failed"), "\(error)")
        #expect(throws: error) { try pair.server.readPlaintext(into: &plaintext) }
        #expect(pair.server.hasPendingCiphertext, "an alert waits to be sent")
    }

    @Test("self-signed certificates reject SAN entries that are not names")
    func badSubjectAltName() throws {
        let error = try #require(throws: TLSError.self) {
            try SelfSignedCertificate.generate(commonName: "x", subjectAltNames: ["a,DNS:evil"])
        }
        #expect(error.kind == .invalidInput)
    }

    @Test("the generated certificate carries IP and DNS SANs and CA:TRUE (checked by openssl x509)")
    func certificateContents() throws {
        let certificate = try SelfSignedCertificate.generate(
            commonName: "Pushgate mock", subjectAltNames: ["127.0.0.1", "::1", "localhost"], validDays: 2)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let text = try runOpenSSL([
            "x509", "-noout", "-text", "-in", directory.write("c.pem", certificate.certificatePEM),
        ])
        try #require(text.status == 0, "\(text.output)")
        #expect(text.output.contains("IP Address:127.0.0.1"))
        #expect(text.output.contains("IP Address:0:0:0:0:0:0:0:1"))
        #expect(text.output.contains("DNS:localhost"))
        #expect(text.output.contains("CA:TRUE"))
        #expect(text.output.contains("Subject: CN = Pushgate mock"))
        #expect(text.output.contains("prime256v1") || text.output.contains("P-256"))
    }
}
