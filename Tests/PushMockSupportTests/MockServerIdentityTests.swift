import Glibc
import PushMockSupport
import PushTLS
import Testing

@Suite("Mock server identity")
struct MockServerIdentityTests {
    /// Handshakes a client trusting `caPEM` (offering h2 and http/1.1) with a server connection of
    /// `context`, in memory; the client connection afterwards.
    private func handshake(
        server context: TLSContext, caPEM: String, serverName: String = "127.0.0.1"
    ) throws -> TLSConnection {
        let client = try TLSConnection(
            context: TLSContext.client(caPEM: caPEM, alpn: ["h2", "http/1.1"], useSystemRoots: false),
            serverName: serverName)
        let server = try TLSConnection(context: context)
        try client.startHandshake()
        var clientPlaintext: [UInt8] = []
        var serverPlaintext: [UInt8] = []
        for _ in 0..<100 {
            var wire: [UInt8] = []
            var moved = client.drainCiphertext(into: &wire)
            wire.withUnsafeBytes { server.receive($0) }
            _ = try server.readPlaintext(into: &serverPlaintext)
            wire.removeAll()
            moved += server.drainCiphertext(into: &wire)
            wire.withUnsafeBytes { client.receive($0) }
            _ = try client.readPlaintext(into: &clientPlaintext)
            if moved == 0 { break }
        }
        return client
    }

    /// Writes `text` to a new file under /tmp; its path.
    private func temporaryFile(_ text: String) throws -> String {
        var template = Array("/tmp/pushmocksupport-test-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        defer { close(fd) }
        let bytes = Array(text.utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test("generated: a certificate clients can trust, with the common name and ALPN asked for")
    func generated() throws {
        let (context, pem) = try MockServerIdentity.loopback.makeServerContext(
            commonName: "mock-test", alpn: ["http/1.1"])
        let certificate = try #require(pem)
        #expect(certificate.hasPrefix("-----BEGIN CERTIFICATE-----"))
        for name in ["127.0.0.1", "localhost"] {
            let client = try handshake(server: context, caPEM: certificate, serverName: name)
            #expect(client.handshakeComplete, "\(name)")
            #expect(client.peerCertificateVerified, "\(name)")
            #expect(client.peerCertificateSubjectCommonName == "mock-test")
            #expect(client.negotiatedALPN == "http/1.1")
        }
        let h2 = try MockServerIdentity.loopback.makeServerContext(commonName: "mock-h2")
        let client = try handshake(server: h2.context, caPEM: try #require(h2.certificatePEM))
        #expect(client.negotiatedALPN == "h2", "h2 by default")
    }

    @Test("generated: each context gets a fresh certificate")
    func freshCertificates() throws {
        let first = try MockServerIdentity.loopback.makeServerContext(commonName: "a").certificatePEM
        let second = try MockServerIdentity.loopback.makeServerContext(commonName: "a").certificatePEM
        #expect(first != nil && first != second)
    }

    @Test("PEM: the given chain is served and returned for clients to trust")
    func pem() throws {
        let identity = try SelfSignedCertificate.generate(commonName: "given", subjectAltNames: ["127.0.0.1"])
        let (context, pem) = try MockServerIdentity.pem(
            certificateChain: identity.certificatePEM, privateKey: identity.privateKeyPEM
        ).makeServerContext(commonName: "ignored")
        #expect(pem == identity.certificatePEM)
        let client = try handshake(server: context, caPEM: identity.certificatePEM)
        #expect(client.handshakeComplete)
        #expect(client.peerCertificateSubjectCommonName == "given", "the given certificate's name, not commonName")
    }

    @Test("files: the chain is served, and no PEM is returned")
    func files() throws {
        let identity = try SelfSignedCertificate.generate(commonName: "from-files", subjectAltNames: ["127.0.0.1"])
        let chain = try temporaryFile(identity.certificatePEM)
        let key = try temporaryFile(identity.privateKeyPEM)
        defer {
            unlink(chain)
            unlink(key)
        }
        let (context, pem) = try MockServerIdentity.files(certificateChain: chain, privateKey: key)
            .makeServerContext(commonName: "ignored")
        #expect(pem == nil)
        let client = try handshake(server: context, caPEM: identity.certificatePEM)
        #expect(client.peerCertificateSubjectCommonName == "from-files")
    }

    @Test("a key that does not match the certificate, or a missing file, is an error")
    func mismatched() throws {
        let one = try SelfSignedCertificate.generate(commonName: "one", subjectAltNames: ["127.0.0.1"])
        let other = try SelfSignedCertificate.generate(commonName: "other", subjectAltNames: ["127.0.0.1"])
        #expect(throws: TLSError.self) {
            try MockServerIdentity.pem(certificateChain: one.certificatePEM, privateKey: other.privateKeyPEM)
                .makeServerContext(commonName: "x")
        }
        #expect(throws: TLSError.self) {
            try MockServerIdentity.files(certificateChain: "/nonexistent/chain.pem", privateKey: "/nonexistent/key.pem")
                .makeServerContext(commonName: "x")
        }
    }
}
