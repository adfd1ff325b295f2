import COpenSSL

/// Converts ECDSA P-256 signatures between OpenSSL's DER form (SEQUENCE { r INTEGER, s INTEGER })
/// and JWS's raw form (RFC 7518 §3.4: r‖s, each a 32-byte big-endian, left-padded integer).
enum ECDSASignatureEncoding {
    static let scalarLength = 32

    static func raw(fromDER der: [UInt8]) throws(TLSError) -> [UInt8] {
        let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let signature else { throw .openSSL(.signing, "cannot parse DER ECDSA signature") }
        defer { ECDSA_SIG_free(signature) }
        guard let r = ECDSA_SIG_get0_r(signature), let s = ECDSA_SIG_get0_s(signature) else {
            throw .openSSL(.signing, "ECDSA signature without r or s")
        }
        var raw = [UInt8](repeating: 0, count: 2 * scalarLength)
        let written = raw.withUnsafeMutableBufferPointer { out in
            (
                BN_bn2binpad(r, out.baseAddress!, Int32(scalarLength)),
                BN_bn2binpad(s, out.baseAddress! + scalarLength, Int32(scalarLength))
            )
        }
        guard written == (Int32(scalarLength), Int32(scalarLength)) else {
            throw .openSSL(.signing, "ECDSA r or s does not fit in 32 bytes")
        }
        return raw
    }

    /// nil unless `raw` is exactly 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * scalarLength else { return nil }
        let (r, s) = raw.withUnsafeBufferPointer { bytes in
            (
                BN_bin2bn(bytes.baseAddress, Int32(scalarLength), nil),
                BN_bin2bn(bytes.baseAddress! + scalarLength, Int32(scalarLength), nil)
            )
        }
        guard let r, let s, let signature = ECDSA_SIG_new() else {
            BN_free(r)
            BN_free(s)
            _ = drainOpenSSLErrorQueue()
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {  // on success the signature owns r and s
            BN_free(r)
            BN_free(s)
            _ = drainOpenSSLErrorQueue()
            return nil
        }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_ECDSA_SIG(signature, &out)
        guard length > 0, let out else {
            _ = drainOpenSSLErrorQueue()
            return nil
        }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }
}
