import COpenSSL

extension P256KeyAgreementKey {
    /// The key pair of a 32-byte private scalar (big-endian), its public point computed from it:
    /// keys derived from a seed. nil unless
    /// the scalar is in 1..n-1 (n the order of P-256).
    public static func keyPair(privateScalar: [UInt8]) -> P256KeyAgreementKey? {
        guard privateScalar.count == 32 else { return nil }
        var point = [UInt8](repeating: 0, count: 65)
        guard COpenSSL_P256_point_of_scalar(privateScalar, &point) == 1 else {
            ERR_clear_error()
            return nil
        }
        return keyPair(point: point, privateScalar: privateScalar)
    }
}
