import PushPosix
package import PushTLS

/// The TLS identity mock server (mock-apns, mock-fcm) presents.
public enum MockServerIdentity: Sendable {
    /// A fresh self-signed P-256 certificate (CA:TRUE, so it is its own trust anchor) valid for
    /// these names; the server's `certificatePEM` returns it for clients to trust.
    case generate(subjectAltNames: [String])
    /// A certificate chain (leaf first) and its private key, as PEM text.
    case pem(certificateChain: String, privateKey: String)
    /// The same, from PEM files.
    case files(certificateChain: String, privateKey: String)

    /// 127.0.0.1 and localhost, the loopback names tests and local tools use.
    public static var loopback: Self { .generate(subjectAltNames: ["127.0.0.1", "localhost"]) }

    /// The server context (offering `alpn`) and the certificate clients should trust: the generated one
    /// (with `commonName` as its CN), or the chain given as PEM; nil when it came from files.
    /// `clientCAPEM`: clients must present a certificate chaining to these CAs (mTLS), as Apple's
    /// certificate-auth hosts demand one; OpenSSL refuses others with an alert (`unknown_ca`,
    /// `certificate_expired`, `certificate_required`…).
    package func makeServerContext(
        commonName: String, alpn: [String] = ["h2"], clientCAPEM: String? = nil
    ) throws -> (context: TLSContext, certificatePEM: String?) {
        switch self {
        case .generate(let names):
            let identity = try SelfSignedCertificate.generate(
                commonName: commonName, subjectAltNames: names, validDays: 365)
            let context = try TLSContext.server(
                certificatePEM: identity.certificatePEM, privateKeyPEM: identity.privateKeyPEM, alpn: alpn,
                clientCAPEM: clientCAPEM)
            return (context, identity.certificatePEM)
        case .pem(let chain, let key):
            return (
                try TLSContext.server(certificatePEM: chain, privateKeyPEM: key, alpn: alpn, clientCAPEM: clientCAPEM),
                chain
            )
        case .files(let chain, let key) where clientCAPEM != nil:
            // The PEM variant takes the client CAs as text: the identity is read as text too.
            let context = try TLSContext.server(
                certificatePEM: FileContents.readText(chain), privateKeyPEM: FileContents.readText(key), alpn: alpn,
                clientCAPEM: clientCAPEM)
            return (context, nil)
        case .files(let chain, let key):
            return (try TLSContext.server(certificateChainFile: chain, privateKeyFile: key, alpn: alpn), nil)
        }
    }
}
