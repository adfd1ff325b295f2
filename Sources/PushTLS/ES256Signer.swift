import COpenSSL

/// Signs with ECDSA P-256 + SHA-256 (JWS "ES256"), e.g. APNs provider tokens with a `.p8` key.
///
/// `@unchecked Sendable`: the key is immutable after init and every `sign` call uses its own
/// EVP_MD_CTX, which OpenSSL 3 allows concurrently on one shared EVP_PKEY.
public final class ES256Signer: @unchecked Sendable {
    let key: EVPKey

    /// Loads an unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----", Apple's `.p8` format).
    /// Throws `.certificate` for anything but an EC key on P-256 (RSA, P-384, …).
    public init(p8PEM: String) throws(TLSError) {
        let key = try EVPKey(privateKeyPEM: p8PEM)
        try key.requireP256("ES256 signing key")
        self.key = key
    }

    /// The public half as SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
    public func publicKeyPEM() throws(TLSError) -> String { try key.publicKeyPEM() }

    /// The public half as the 65-byte uncompressed point (0x04 ‖ x ‖ y): a VAPID `k`, the
    /// application server key a web page passes to `pushManager.subscribe`.
    public func publicPoint() throws(TLSError) -> [UInt8] {
        var point = [UInt8](repeating: 0, count: 65)
        guard COpenSSL_P256_public_point(key.pkey, &point) == 1 else {
            throw .openSSL(.certificate, "cannot read the P-256 public point")
        }
        return point
    }

    /// The JWS signature of `message`: raw r‖s, 64 bytes (not DER).
    public func sign(_ message: [UInt8]) throws(TLSError) -> [UInt8] {
        try ECDSASignatureEncoding.raw(fromDER: try key.signSHA256(message))
    }

    /// A fresh P-256 key pair for tests and the mock APNs server: the private key as PKCS#8 PEM
    /// (what Apple's `.p8` files hold) and the public key as SubjectPublicKeyInfo PEM.
    public static func generateP8() throws(TLSError) -> (privateKeyPEM: String, publicKeyPEM: String) {
        let key = try EVPKey.generateP256()
        return (try key.privateKeyPEM(), try key.publicKeyPEM())
    }
}
