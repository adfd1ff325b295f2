import COpenSSL

extension AES128GCM {
    /// The plaintext of `sealed` (ciphertext, then its 16-byte tag) under `key` (16 bytes) and
    /// `nonce` (12 bytes); nil when it is shorter than a tag or the tag does not verify (wrong
    /// key, or altered bytes).
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8]) -> [UInt8]? {
        precondition(key.count == 16 && nonce.count == 12, "AES-128-GCM takes a 16-byte key and a 12-byte nonce")
        guard sealed.count >= 16 else { return nil }
        // One spare byte: the output pointer must be valid even for an empty plaintext.
        var out = [UInt8](repeating: 0, count: sealed.count - 16 + 1)
        guard COpenSSL_AES128GCM_open(key, nonce, sealed, Int32(sealed.count), &out) == 1 else {
            ERR_clear_error()
            return nil
        }
        out.removeLast()
        return out
    }
}
