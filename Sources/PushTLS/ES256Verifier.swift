/// Verifies ES256 (ECDSA P-256 + SHA-256) signatures in JWS raw r‖s form; the mock APNs server
/// checks provider tokens with it.
public struct ES256Verifier: Sendable {
    let key: EVPKey

    /// From a SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----") of a P-256 key.
    public init(publicKeyPEM: String) throws(TLSError) {
        let key = try EVPKey(publicKeyPEM: publicKeyPEM)
        try key.requireP256("ES256 verification key")
        self.key = key
    }

    /// From a `.p8` private key, keeping only its public half.
    public init(p8PEM: String) throws(TLSError) {
        let privateKey = try EVPKey(privateKeyPEM: p8PEM)
        try privateKey.requireP256("ES256 verification key")
        self.key = try privateKey.publicOnly()
    }

    /// True when `rawSignature` (64 bytes r‖s) is a valid signature of `message`. Malformed
    /// signatures are simply invalid.
    public func verify(_ message: [UInt8], rawSignature: [UInt8]) -> Bool {
        guard let der = ECDSASignatureEncoding.der(fromRaw: rawSignature) else { return false }
        return key.verifySHA256(der, for: message)
    }
}
