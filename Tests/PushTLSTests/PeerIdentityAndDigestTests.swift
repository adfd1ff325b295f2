import PushTLS
import Testing

@Suite("Peer certificate identity, SHA-256, random bytes")
struct PeerIdentityAndDigestTests {
    @Test("mTLS: the server reads the verified client certificate's subject CN")
    func peerCommonName() throws {
        let serverIdentity = try SelfSignedCertificate.generate(commonName: "gateway", subjectAltNames: ["localhost"])
        let clientIdentity = try SelfSignedCertificate.generate(commonName: "billing-service", subjectAltNames: [])
        let server = try TLSContext.server(
            certificatePEM: serverIdentity.certificatePEM, privateKeyPEM: serverIdentity.privateKeyPEM,
            clientCAPEM: clientIdentity.certificatePEM)
        let client = try TLSContext.client(
            caPEM: serverIdentity.certificatePEM, useSystemRoots: false,
            certificateChainPEM: clientIdentity.certificatePEM, privateKeyPEM: clientIdentity.privateKeyPEM)
        var pair = try InMemoryPair(
            client: TLSConnection(context: client, serverName: "localhost"), server: TLSConnection(context: server))
        #expect(pair.server.peerCertificateSubjectCommonName == nil)
        try pair.pump()
        #expect(pair.server.peerCertificateVerified)
        #expect(pair.server.peerCertificateSubjectCommonName == "billing-service")
        #expect(pair.client.peerCertificateSubjectCommonName == "gateway")
    }

    @Test("plain TLS: no client certificate, so no peer name on the server")
    func noClientCertificate() throws {
        let identity = try SelfSignedCertificate.generate(commonName: "gateway", subjectAltNames: ["localhost"])
        let server = try TLSContext.server(
            certificatePEM: identity.certificatePEM, privateKeyPEM: identity.privateKeyPEM)
        let client = try TLSContext.client(caPEM: identity.certificatePEM, useSystemRoots: false)
        var pair = try InMemoryPair(
            client: TLSConnection(context: client, serverName: "localhost"), server: TLSConnection(context: server))
        try pair.pump()
        #expect(pair.server.handshakeComplete)
        #expect(!pair.server.peerCertificateVerified)
        #expect(pair.server.peerCertificateSubjectCommonName == nil)
    }

    @Test("SHA-256 matches the FIPS 180-2 test vectors")
    func sha256() {
        func hex(_ bytes: [UInt8]) -> String {
            bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        #expect(hex(SHA256.hash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex(SHA256.hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("random bytes are the requested length and differ between calls")
    func random() throws {
        let a = try SecureRandom.bytes(count: 32)
        let b = try SecureRandom.bytes(count: 32)
        #expect(a.count == 32)
        #expect(a != b)
    }
}
