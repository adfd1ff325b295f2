import COpenSSL

/// HMAC-SHA-256 (RFC 2104) through OpenSSL's one-shot `HMAC`: AWS Signature Version 4 derives its
/// signing key and signs with it.
public enum HMACSHA256 {
    /// The 32-byte authentication code of `message` under `key` (a key of any length, empty included).
    public static func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // OpenSSL reads a null key as "no key given" rather than an empty one, so empty inputs are
        // passed as a real pointer with a length of 0.
        let placeholder: [UInt8] = [0]
        let result = (key.isEmpty ? placeholder : key).withUnsafeBufferPointer { keyBytes in
            (message.isEmpty ? placeholder : message).withUnsafeBufferPointer { messageBytes in
                code.withUnsafeMutableBufferPointer { output in
                    HMAC(
                        EVP_sha256(), keyBytes.baseAddress, Int32(key.count), messageBytes.baseAddress,
                        message.count, output.baseAddress, &length)
                }
            }
        }
        // HMAC-SHA-256 cannot fail short of memory exhaustion; make that loud rather than a wrong code.
        precondition(result != nil && length == 32, "HMAC(SHA-256) failed: \(drainOpenSSLErrorQueue())")
        return Array(code.prefix(32))
    }
}
