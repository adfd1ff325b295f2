import COpenSSL

extension ES256Verifier {
    /// From a raw 65-byte uncompressed P-256 point (0x04 ‖ x ‖ y), as VAPID's `k=` carries the
    /// sender's key (RFC 8292 §3.2); nil unless it is a point on the curve.
    public init?(uncompressedPoint point: [UInt8]) {
        guard point.count == 65, point[0] == 0x04, let pkey = COpenSSL_P256_from_raw(point, nil) else {
            ERR_clear_error()
            return nil
        }
        key = EVPKey(taking: pkey)
    }
}
