import PushTLS
import Testing

/// Issue #46: a server that refuses our client certificate. With TLS 1.3 the client's handshake
/// completes first and the server's verdict arrives as an alert; the error must carry its name.
@Suite("Received TLS alerts and certificate summaries")
struct TLSAlertTests {
    static let server = Result {
        try SelfSignedCertificate.generate(commonName: "refusing server", subjectAltNames: ["localhost"])
    }
    static let acceptedClient = Result {
        try SelfSignedCertificate.generate(commonName: "accepted", subjectAltNames: [])
    }
    static let otherClient = Result { try SelfSignedCertificate.generate(commonName: "other CA", subjectAltNames: []) }

    /// Handshakes a client presenting `identity` (none: nil) with a server that accepts only
    /// ``acceptedClient``; returns whether the client's handshake had completed when it failed,
    /// and the client's error.
    func refuse(presenting identity: SelfSignedCertificate?) throws -> (completedFirst: Bool, error: TLSError?) {
        let server = try Self.server.get()
        let serverContext = try TLSContext.server(
            certificatePEM: server.certificatePEM, privateKeyPEM: server.privateKeyPEM,
            clientCAPEM: Self.acceptedClient.get().certificatePEM)
        let clientContext = try TLSContext.client(
            caPEM: server.certificatePEM, useSystemRoots: false, certificateChainPEM: identity?.certificatePEM,
            privateKeyPEM: identity?.privateKeyPEM)
        let client = try TLSConnection(context: clientContext, serverName: "localhost")
        let serverSide = try TLSConnection(context: serverContext)
        try client.startHandshake()
        var completedFirst = false
        var scratch: [UInt8] = []
        for _ in 0..<20 {
            var wire: [UInt8] = []
            _ = client.drainCiphertext(into: &wire)
            wire.withUnsafeBytes { serverSide.receive($0) }
            _ = try? serverSide.readPlaintext(into: &scratch)  // the server refuses: its alert is queued
            wire.removeAll()
            _ = serverSide.drainCiphertext(into: &wire)
            wire.withUnsafeBytes { client.receive($0) }
            let before = client.handshakeComplete
            do {
                _ = try client.readPlaintext(into: &scratch)
            } catch {
                return (before, error)
            }
            completedFirst = client.handshakeComplete
            if wire.isEmpty && !client.hasPendingCiphertext { break }
        }
        return (completedFirst, nil)
    }

    @Test("TLS 1.3: a client certificate from another CA completes our handshake, then unknown_ca arrives")
    func otherCA() throws {
        let (completedFirst, error) = try refuse(presenting: Self.otherClient.get())
        #expect(completedFirst, "the client was done before the server judged its certificate")
        let alert = try #require(error?.alert)
        #expect(alert.name == "unknown_ca")
        #expect(alert.refusesCertificate)
    }

    @Test("no client certificate at all: certificate_required")
    func noCertificate() throws {
        let (_, error) = try refuse(presenting: nil)
        #expect(error?.alert?.name == "certificate_required")
    }

    @Test("an accepted certificate: no error")
    func accepted() throws {
        let (completed, error) = try refuse(presenting: Self.acceptedClient.get())
        #expect(error == nil && completed)
    }

    @Test("errors that are not received alerts carry none")
    func noAlert() throws {
        #expect(TLSAlert.received(in: 0) == nil)
        let error = try #require(throws: TLSError.self) { try TLSContext.client(caFile: "/nonexistent/ca.pem") }
        #expect(error.alert == nil)
    }

    @Test("a certificate summary names the subject and the expiry; a context without one has none")
    func summary() throws {
        let identity = try Self.acceptedClient.get()
        let summary = try CertificateSummary(pem: identity.certificatePEM)
        #expect(summary.subject.contains("CN=accepted"))
        #expect(summary.notAfter > 1_700_000_000)
        #expect(summary.expiry.hasSuffix("Z") && summary.expiry.count == 20)
        let context = try TLSContext.client(
            caPEM: identity.certificatePEM, useSystemRoots: false, certificateChainPEM: identity.certificatePEM,
            privateKeyPEM: identity.privateKeyPEM)
        #expect(context.clientCertificate == summary)
        #expect(try TLSContext.client(useSystemRoots: false).clientCertificate == nil)
        #expect(CertificateSummary(subject: "/CN=x", notAfter: 0).expiry == "1970-01-01T00:00:00Z")
        #expect(throws: TLSError.self) { try CertificateSummary(pem: "junk") }
    }
}
