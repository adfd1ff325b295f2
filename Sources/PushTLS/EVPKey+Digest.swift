import COpenSSL

// SHA-256 signing and verification with an EVP_PKEY, shared by ES256, RS256 and PS256: the key type
// decides the scheme (ECDSA, or for RSA keys RSASSA-PKCS1-v1_5, OpenSSL's default padding, or
// RSASSA-PSS when asked, with a salt as long as the digest as JWS PS256 has it, RFC 7518 §3.5).

extension EVPKey {
    /// The SHA-256 signature of `message` in the key type's native encoding (DER for ECDSA, the
    /// modulus-sized big-endian integer for RSA).
    func signSHA256(_ message: [UInt8], pss: Bool = false) throws(TLSError) -> [UInt8] {
        guard let digest = EVP_MD_CTX_new() else { throw .openSSL(.signing, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(digest) }
        var context: OpaquePointer?
        guard EVP_DigestSignInit(digest, &context, EVP_sha256(), nil, pkey) == 1 else {
            throw .openSSL(.signing, "EVP_DigestSignInit failed")
        }
        if pss {
            guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
            else { throw .openSSL(.signing, "setting RSASSA-PSS padding failed") }
        }
        var length = 0
        let sized = message.withUnsafeBufferPointer { EVP_DigestSign(digest, nil, &length, $0.baseAddress, $0.count) }
        guard sized == 1, length > 0 else { throw .openSSL(.signing, "EVP_DigestSign (sizing) failed") }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer {
                EVP_DigestSign(digest, out.baseAddress, &length, $0.baseAddress, $0.count)
            }
        }
        guard signed == 1 else { throw .openSSL(.signing, "EVP_DigestSign failed") }
        signature.removeLast(signature.count - length)  // the sizing call gives an upper bound (ECDSA DER varies)
        return signature
    }

    /// True when `signature` (native encoding) is a valid SHA-256 signature of `message`.
    /// Failures of any kind are "invalid", and OpenSSL's error queue is left empty.
    func verifySHA256(_ signature: [UInt8], for message: [UInt8], pss: Bool = false) -> Bool {
        guard let digest = EVP_MD_CTX_new() else {
            _ = drainOpenSSLErrorQueue()
            return false
        }
        defer { EVP_MD_CTX_free(digest) }
        var context: OpaquePointer?
        guard EVP_DigestVerifyInit(digest, &context, EVP_sha256(), nil, pkey) == 1 else {
            _ = drainOpenSSLErrorQueue()
            return false
        }
        if pss {
            guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
            else {
                _ = drainOpenSSLErrorQueue()
                return false
            }
        }
        let status = signature.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer {
                EVP_DigestVerify(digest, signature.baseAddress, signature.count, $0.baseAddress, $0.count)
            }
        }
        // 1 valid, 0 invalid, negative for errors: only 1 counts, and no error may linger.
        if status != 1 { _ = drainOpenSSLErrorQueue() }
        return status == 1
    }
}
