public import PushTLS

/// Why an `aes128gcm` Web Push body did not decrypt (RFC 8188 §2, RFC 8291 §4).
public enum WebPushDecryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Shorter than the 86-byte header (salt 16, rs 4, idlen 1, a 65-byte key id).
    case headerTooShort(bytes: Int)
    /// The record size is under 18, the smallest RFC 8188 allows.
    case recordSizeTooSmall(Int)
    /// The key id is not the sender's 65-byte uncompressed P-256 point (`idlen` or the point).
    case keyIDNotAPoint(length: Int)
    /// The auth secret is not 16 bytes.
    case authSecretLength(Int)
    /// Fewer bytes after the header than a tag and a delimiter.
    case recordTooShort(bytes: Int)
    /// More ciphertext than one record of `rs` bytes: Web Push messages are one record.
    case moreThanOneRecord(ciphertext: Int, recordSize: Int)
    /// The AES-GCM tag did not verify: another subscription's keys, or altered bytes.
    case authenticationFailed
    /// The record is all zeros: no delimiter.
    case noDelimiter
    /// The delimiter is 0x01, a record that is not the last (one record must be the last).
    case notLastRecord
    /// The last non-zero byte is neither 0x01 nor 0x02.
    case badDelimiter(UInt8)
    /// ECDH or HKDF failed in OpenSSL.
    case keyAgreement(String)

    public var description: String {
        switch self {
        case .headerTooShort(let bytes): "the body (\(bytes) bytes) is shorter than the 86-byte aes128gcm header"
        case .recordSizeTooSmall(let rs): "the record size \(rs) is under 18"
        case .keyIDNotAPoint(let length):
            "the key id (\(length) bytes) is not the sender's 65-byte uncompressed P-256 point"
        case .authSecretLength(let count): "the auth secret is \(count) bytes, not 16"
        case .recordTooShort(let bytes): "the record (\(bytes) bytes) is shorter than a tag and a delimiter"
        case .moreThanOneRecord(let ciphertext, let rs):
            "\(ciphertext) bytes of ciphertext are more than one record of \(rs) bytes"
        case .authenticationFailed: "the AES-GCM tag does not verify (other keys, or altered bytes)"
        case .noDelimiter: "the record has no padding delimiter"
        case .notLastRecord: "the delimiter is 0x01 (not the last record)"
        case .badDelimiter(let byte): "the padding delimiter is 0x\(String(byte, radix: 16)), not 0x02"
        case .keyAgreement(let message): "key agreement failed: \(message)"
        }
    }
}

/// Reading a Web Push message (RFC 8291) as the user agent does: the `aes128gcm` header gives the
/// salt, record size and the sender's public key; ECDH with the subscription's private key and
/// its auth secret give the content key and nonce; the one record is opened and its padding
/// (zeros after the 0x02 delimiter) removed.
public enum WebPushDecryption {
    /// The plaintext of `body`.
    /// - Parameters:
    ///   - receiver: the subscription's key pair (with the private half).
    ///   - authSecret: the subscription's `auth` (16 bytes).
    public static func decrypt(
        _ body: [UInt8], receiver: P256KeyAgreementKey, authSecret: [UInt8]
    ) throws(WebPushDecryptionError) -> [UInt8] {
        guard authSecret.count == 16 else { throw .authSecretLength(authSecret.count) }
        guard body.count >= 21 else { throw .headerTooShort(bytes: body.count) }
        let salt = Array(body[0..<16])
        let recordSize = Int(body[16]) << 24 | Int(body[17]) << 16 | Int(body[18]) << 8 | Int(body[19])
        let idLength = Int(body[20])
        guard recordSize >= 18 else { throw .recordSizeTooSmall(recordSize) }
        guard body.count >= 21 + idLength else { throw .headerTooShort(bytes: body.count) }
        let keyID = Array(body[21..<21 + idLength])
        guard idLength == 65, let sender = P256KeyAgreementKey.publicKey(point: keyID) else {
            throw .keyIDNotAPoint(length: idLength)
        }
        let sealed = Array(body[(21 + idLength)...])
        guard sealed.count >= 17 else { throw .recordTooShort(bytes: sealed.count) }
        guard sealed.count <= recordSize else {
            throw .moreThanOneRecord(ciphertext: sealed.count, recordSize: recordSize)
        }
        let key: [UInt8]
        let nonce: [UInt8]
        do {
            (key, nonce) = try WebPushEncryption.contentKeyAndNonce(
                ecdhSecret: try receiver.sharedSecret(with: sender), authSecret: authSecret,
                receiverPoint: receiver.publicPoint, senderPoint: sender.publicPoint, salt: salt)
        } catch {
            throw .keyAgreement(error.message)
        }
        guard var record = AES128GCM.open(sealed, key: key, nonce: nonce) else { throw .authenticationFailed }
        // RFC 8188 §2: padding is zeros after the delimiter; the last record's delimiter is 0x02.
        guard let last = record.lastIndex(where: { $0 != 0 }) else { throw .noDelimiter }
        switch record[last] {
        case 0x02: break
        case 0x01: throw .notLastRecord
        default: throw .badDelimiter(record[last])
        }
        record.removeSubrange(last...)
        return record
    }
}
