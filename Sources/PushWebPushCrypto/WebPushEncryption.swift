public import PushTLS

/// The Web Push message encryption of RFC 8291: the `aes128gcm` content coding of RFC 8188 with
/// keys from an ECDH between the sender's key and the subscription's `p256dh`, mixed with its
/// `auth` secret. One record: the plaintext, the 0x02 delimiter of a last record, then padding.
public enum WebPushEncryption {
    /// The record size written in the header: the whole body must fit in one 4,096-byte record.
    public static let recordSize = 4096
    /// The header: salt (16), record size (4), key id length (1), the sender's public point (65).
    public static let headerSize = 86
    /// The largest plaintext one record carries: 4,096 less the tag (16) and the delimiter (1).
    public static let maxPlaintext = recordSize - 16 - 1 - headerSize

    /// The body of a push message to a subscription.
    /// - Parameters:
    ///   - receiver: the subscription's `p256dh`.
    ///   - authSecret: the subscription's `auth` (16 bytes).
    ///   - sender: the sender's key, fresh for every message and subscriber.
    ///   - salt: 16 random bytes, fresh for every message.
    ///   - padding: zero bytes after the delimiter (hides the length; 0 by default).
    public static func encrypt(
        _ plaintext: [UInt8], receiver: P256KeyAgreementKey, authSecret: [UInt8], sender: P256KeyAgreementKey,
        salt: [UInt8], padding: Int = 0
    ) throws(TLSError) -> [UInt8] {
        guard authSecret.count == 16, salt.count == 16 else {
            throw TLSError(.invalidInput, "Web Push: the auth secret and the salt are 16 bytes each")
        }
        guard plaintext.count + padding <= maxPlaintext else {
            throw TLSError(
                .invalidInput, "Web Push: \(plaintext.count) bytes do not fit in one record (at most \(maxPlaintext))")
        }
        let (contentKey, nonce) = try contentKeyAndNonce(
            ecdhSecret: try sender.sharedSecret(with: receiver), authSecret: authSecret,
            receiverPoint: receiver.publicPoint, senderPoint: sender.publicPoint, salt: salt)
        let record = plaintext + [0x02] + [UInt8](repeating: 0, count: padding)
        var body = salt
        body.reserveCapacity(headerSize + record.count + 16)
        let size = UInt32(recordSize)
        body += [UInt8(size >> 24), UInt8((size >> 16) & 0xff), UInt8((size >> 8) & 0xff), UInt8(size & 0xff)]
        body.append(UInt8(sender.publicPoint.count))
        body += sender.publicPoint
        body += try AES128GCM.seal(record, key: contentKey, nonce: nonce)
        return body
    }

    /// RFC 8291 §3.3-3.4 and RFC 8188 §2.2-2.3: the content-encryption key and nonce of a message,
    /// from the ECDH secret, the auth secret, both public points and the salt (the same on both ends).
    static func contentKeyAndNonce(
        ecdhSecret: [UInt8], authSecret: [UInt8], receiverPoint: [UInt8], senderPoint: [UInt8], salt: [UInt8]
    ) throws(TLSError) -> (key: [UInt8], nonce: [UInt8]) {
        // key_info = "WebPush: info" ‖ 0x00 ‖ ua_public ‖ as_public.
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPoint + senderPoint
        let ikm = try HKDF.sha256(salt: authSecret, ikm: ecdhSecret, info: keyInfo, count: 32)
        let key = try HKDF.sha256(
            salt: salt, ikm: ikm, info: Array("Content-Encoding: aes128gcm".utf8) + [0], count: 16)
        let nonce = try HKDF.sha256(salt: salt, ikm: ikm, info: Array("Content-Encoding: nonce".utf8) + [0], count: 12)
        return (key, nonce)
    }
}
