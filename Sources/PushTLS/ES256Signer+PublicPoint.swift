import COpenSSL

extension ES256Signer {
    /// The public key as a raw 65-byte uncompressed point (0x04 ‖ x ‖ y): VAPID's `k=` (RFC 8292 §3.2).
    public func uncompressedPublicPoint() throws(TLSError) -> [UInt8] {
        var point = [UInt8](repeating: 0, count: 65)
        guard COpenSSL_P256_public_point(key.pkey, &point) == 1 else {
            throw .openSSL(.signing, "cannot read the P-256 public point")
        }
        return point
    }
}
