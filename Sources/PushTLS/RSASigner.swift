/// The RSA signature schemes of JWS that providers use: "RS256" (RSASSA-PKCS1-v1_5 + SHA-256:
/// Google service-account assertions, docs/providers.md B.5) and "PS256" (RSASSA-PSS + SHA-256,
/// salt length 32: Huawei Push Kit's service-account JWTs). One key type, one signer and one
/// verifier serve both; the scheme is the padding.
public enum RSAScheme: Sendable {
    case rs256
    case ps256

    var name: String { self == .rs256 ? "RS256" : "PS256" }
    var pss: Bool { self == .ps256 }
}

/// Signs with an RSA scheme.
///
/// `@unchecked Sendable`: the key is immutable after init and every `sign` call uses its own
/// EVP_MD_CTX, which OpenSSL 3 allows concurrently on one shared EVP_PKEY.
public final class RSASigner: @unchecked Sendable {
    let key: EVPKey
    public let scheme: RSAScheme
    /// The public half as SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
    public let publicKeyPEM: String

    /// Loads an unencrypted RSA private key: PKCS#8 ("BEGIN PRIVATE KEY", what service-account
    /// files hold) or PKCS#1 ("BEGIN RSA PRIVATE KEY"). Throws `.certificate` for other key types
    /// and for RSA keys under 2048 bits.
    public init(scheme: RSAScheme, pem: String) throws(TLSError) {
        key = try EVPKey.rsa(privateKeyPEM: pem, as: "\(scheme.name) signing key")
        self.scheme = scheme
        publicKeyPEM = try key.publicKeyPEM()
    }

    /// The signature of `message` (as long as the modulus: 256 bytes for RSA-2048); PS256's is
    /// randomized, as PSS is.
    public func sign(_ message: [UInt8]) throws(TLSError) -> [UInt8] {
        try key.signSHA256(message, pss: scheme.pss)
    }
}

/// Verifies signatures of an RSA scheme; the mocks check OAuth2 assertions (RS256) and Huawei JWTs
/// (PS256) with it.
public struct RSAVerifier: Sendable {
    let key: EVPKey
    public let scheme: RSAScheme

    /// From a SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----") of an RSA key.
    public init(scheme: RSAScheme, publicKeyPEM: String) throws(TLSError) {
        let key = try EVPKey(publicKeyPEM: publicKeyPEM)
        try key.requireRSA("\(scheme.name) verification key")
        self.key = key
        self.scheme = scheme
    }

    /// From an RSA private key (PKCS#8 or PKCS#1 PEM), keeping only its public half.
    public init(scheme: RSAScheme, privateKeyPEM: String) throws(TLSError) {
        key = try EVPKey.rsa(privateKeyPEM: privateKeyPEM, as: "\(scheme.name) verification key").publicOnly()
        self.scheme = scheme
    }

    /// True when `signature` is a valid signature of `message`. Malformed signatures (wrong
    /// length, garbage) are simply invalid.
    public func verify(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.verifySHA256(signature, for: message, pss: scheme.pss)
    }
}

/// Fresh RSA keys, for tests and for the service accounts `pushgate mock-fcm` writes.
public enum RSAKeyPair {
    /// A new key pair: the private key as unencrypted PKCS#8 PEM (the service-account format),
    /// the public key as SubjectPublicKeyInfo PEM. `bits` must be 2048…16384.
    public static func generate(bits: Int = 2048) throws(TLSError) -> (privateKeyPEM: String, publicKeyPEM: String) {
        guard (2048...16384).contains(bits) else {
            throw TLSError(.invalidInput, "RSA key size must be 2048 to 16384 bits, got \(bits)")
        }
        let key = try EVPKey.generateRSA(bits: bits)
        return (try key.privateKeyPEM(), try key.publicKeyPEM())
    }
}
