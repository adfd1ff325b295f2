import COpenSSL

/// SHA-256 through OpenSSL's `EVP_Digest` (API-key checks hash what a client presents).
public enum SHA256 {
    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { input in
            [UInt8](unsafeUninitializedCapacity: 32) { output, count in
                hash(input, into: UnsafeMutableRawBufferPointer(output))
                count = 32
            }
        }
    }

    /// Writes the 32-byte digest of `input` to the start of `output` (at least 32 bytes): no
    /// allocation, for per-row keys (the store's token keys).
    public static func hash(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= 32, "a SHA-256 digest needs 32 bytes")
        var length: UInt32 = 0
        // EVP_Digest reads nothing from a null pointer when the length is 0.
        let status = EVP_Digest(
            input.baseAddress, input.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self), &length,
            EVP_sha256(), nil)
        // SHA-256 cannot fail short of memory exhaustion; make that loud rather than a wrong digest.
        precondition(status == 1 && length == 32, "EVP_Digest(SHA-256) failed: \(drainOpenSSLErrorQueue())")
    }

    /// The digest of a string's UTF-8 bytes.
    public static func hash(_ text: String) -> [UInt8] { hash(Array(text.utf8)) }
}

/// Random bytes from OpenSSL's CSPRNG (`RAND_bytes`), for secrets such as API keys.
public enum SecureRandom {
    public static func bytes(count: Int) throws(TLSError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        guard status == 1 else { throw .openSSL(.configuration, "RAND_bytes failed") }
        return bytes
    }
}
