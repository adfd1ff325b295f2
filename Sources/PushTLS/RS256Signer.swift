/// Signs with RSASSA-PKCS1-v1_5 + SHA-256 (JWS "RS256"): Google service-account assertions
/// (docs/providers.md B.5).
///
/// `@unchecked Sendable`: the key is immutable after init and every `sign` call uses its own
/// EVP_MD_CTX, which OpenSSL 3 allows concurrently on one shared EVP_PKEY.
public final class RS256Signer: @unchecked Sendable {
    let key: EVPKey
    /// The public half as SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
    public let publicKeyPEM: String

    /// Loads an unencrypted RSA private key: PKCS#8 ("BEGIN PRIVATE KEY", what service-account
    /// files hold) or PKCS#1 ("BEGIN RSA PRIVATE KEY"). Throws `.certificate` for other key types
    /// and for RSA keys under 2048 bits.
    public init(pem: String) throws(TLSError) {
        let key = try EVPKey(privateKeyPEM: pem)
        try key.requireRSA("RS256 signing key")
        self.key = key
        publicKeyPEM = try key.publicKeyPEM()
    }

    /// The RS256 signature of `message` (as long as the modulus: 256 bytes for RSA-2048).
    public func sign(_ message: [UInt8]) throws(TLSError) -> [UInt8] {
        try key.signSHA256(message)
    }
}

/// Verifies RS256 (RSASSA-PKCS1-v1_5 + SHA-256) signatures; the mock FCM server checks OAuth2
/// assertions with it.
public struct RS256Verifier: Sendable {
    let key: EVPKey

    /// From a SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----") of an RSA key.
    public init(publicKeyPEM: String) throws(TLSError) {
        let key = try EVPKey(publicKeyPEM: publicKeyPEM)
        try key.requireRSA("RS256 verification key")
        self.key = key
    }

    /// From an RSA private key (PKCS#8 or PKCS#1 PEM), keeping only its public half.
    public init(privateKeyPEM: String) throws(TLSError) {
        let privateKey = try EVPKey(privateKeyPEM: privateKeyPEM)
        try privateKey.requireRSA("RS256 verification key")
        key = try privateKey.publicOnly()
    }

    /// True when `signature` is a valid RS256 signature of `message`. Malformed signatures
    /// (wrong length, garbage) are simply invalid.
    public func verify(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.verifySHA256(signature, for: message)
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

/// Signs with RSASSA-PSS + SHA-256, salt length 32 (JWS "PS256"): Huawei Push Kit's service-account
/// JWTs (docs/providers.md, Huawei).
public final class PS256Signer: @unchecked Sendable {
    let key: EVPKey
    /// The public half as SubjectPublicKeyInfo PEM.
    public let publicKeyPEM: String

    /// An unencrypted RSA private key, PKCS#8 or PKCS#1 PEM, of at least 2048 bits.
    public init(pem: String) throws(TLSError) {
        let key = try EVPKey(privateKeyPEM: pem)
        try key.requireRSA("PS256 signing key")
        self.key = key
        publicKeyPEM = try key.publicKeyPEM()
    }

    /// The PS256 signature of `message` (as long as the modulus); randomized, as PSS is.
    public func sign(_ message: [UInt8]) throws(TLSError) -> [UInt8] {
        try key.signSHA256(message, pss: true)
    }
}

/// Verifies PS256 signatures (RSASSA-PSS + SHA-256, salt length 32); `pushgate mock-hms` checks
/// Huawei JWTs with it.
public struct PS256Verifier: Sendable {
    let key: EVPKey

    public init(publicKeyPEM: String) throws(TLSError) {
        let key = try EVPKey(publicKeyPEM: publicKeyPEM)
        try key.requireRSA("PS256 verification key")
        self.key = key
    }

    public init(privateKeyPEM: String) throws(TLSError) {
        let privateKey = try EVPKey(privateKeyPEM: privateKeyPEM)
        try privateKey.requireRSA("PS256 verification key")
        key = try privateKey.publicOnly()
    }

    public func verify(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        key.verifySHA256(signature, for: message, pss: true)
    }
}
