import PushTLS
import PushWebPushCrypto
import Testing

/// Decrypting `aes128gcm` bodies as a user agent does: RFC 8291 Appendix A read back, round trips
/// with ``WebPushEncryption``, and each malformed body refused with its reason.
@Suite("Web Push decryption (RFC 8291)")
struct WebPushDecryptionTests {
    typealias Vector = WebPushEncryptionTests
    static let uaPrivate = Vector.bytes("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")

    static func receiver() throws -> P256KeyAgreementKey {
        try #require(P256KeyAgreementKey.keyPair(privateScalar: uaPrivate))
    }

    @Test("Appendix A: the user agent's key pair from its scalar alone, and the body back to its plaintext")
    func appendixA() throws {
        let receiver = try Self.receiver()
        #expect(receiver.publicPoint == Vector.uaPublic, "the point computed from the scalar is the RFC's")
        let plaintext = try WebPushDecryption.decrypt(
            Vector.bytes(Vector.body), receiver: receiver, authSecret: Vector.authSecret)
        #expect(plaintext == Vector.plaintext)
    }

    @Test("round trip with WebPushEncryption, padding removed; empty and the largest plaintexts")
    func roundTrip() throws {
        let receiver = try Self.receiver()
        for (plaintext, padding) in [
            (Array("hello".utf8), 0), (Array("padded".utf8), 100), ([], 0),
            ([UInt8](repeating: 0, count: WebPushEncryption.maxPlaintext), 0),
        ] {
            let body = try WebPushEncryption.encrypt(
                plaintext, receiver: receiver, authSecret: Vector.authSecret, sender: try .generate(),
                salt: Vector.salt, padding: padding)
            #expect(try WebPushDecryption.decrypt(body, receiver: receiver, authSecret: Vector.authSecret) == plaintext)
        }
    }

    @Test("scalars outside 1..n-1 are no key")
    func badScalars() {
        #expect(P256KeyAgreementKey.keyPair(privateScalar: [UInt8](repeating: 0, count: 32)) == nil)
        #expect(P256KeyAgreementKey.keyPair(privateScalar: [UInt8](repeating: 0xFF, count: 32)) == nil)
        #expect(P256KeyAgreementKey.keyPair(privateScalar: [1, 2, 3]) == nil)
        #expect(P256KeyAgreementKey.keyPair(privateScalar: [UInt8](repeating: 0, count: 31) + [1]) != nil)
    }

    @Test("tampered tag, other keys, short bodies, bad headers and delimiters fail with their reason")
    func refusals() throws {
        let receiver = try Self.receiver()
        let body = Vector.bytes(Vector.body)
        func reason(_ body: [UInt8], authSecret: [UInt8] = Vector.authSecret) -> WebPushDecryptionError? {
            do {
                _ = try WebPushDecryption.decrypt(body, receiver: receiver, authSecret: authSecret)
                return nil
            } catch {
                return error
            }
        }
        var tampered = body
        tampered[tampered.count - 1] ^= 0x01
        #expect(reason(tampered) == .authenticationFailed)
        #expect(reason(body, authSecret: [UInt8](repeating: 7, count: 16)) == .authenticationFailed)
        #expect(reason(body, authSecret: [1]) == .authSecretLength(1))
        #expect(reason(Array(body.prefix(50))) == .headerTooShort(bytes: 50))
        #expect(reason(Array(body.prefix(90))) == .recordTooShort(bytes: 4))
        var smallRecord = body
        smallRecord[16...19] = [0, 0, 0, 17]
        #expect(reason(smallRecord) == .recordSizeTooSmall(17))
        var oneRecordTooFew = body
        oneRecordTooFew[16...19] = [0, 0, 0, 18]
        #expect(reason(oneRecordTooFew) == .moreThanOneRecord(ciphertext: body.count - 86, recordSize: 18))
        var shortID = body
        shortID[20] = 64
        #expect(reason(shortID) == .keyIDNotAPoint(length: 64))
        var offCurve = body
        offCurve[85] ^= 0x01
        #expect(reason(offCurve) == .keyIDNotAPoint(length: 65))

        // Records sealed by hand with the Appendix A keys, so only the delimiter differs.
        let sender = try #require(
            P256KeyAgreementKey.keyPair(point: Vector.asPublic, privateScalar: Vector.asPrivate))
        for (record, expected) in [
            ([0x41, 0x01] as [UInt8], WebPushDecryptionError.notLastRecord), ([0x41, 0x03], .badDelimiter(0x03)),
            ([0, 0, 0], .noDelimiter),
        ] {
            #expect(reason(try Self.seal(record, receiver: receiver, sender: sender)) == expected)
        }
    }

    /// A body around `record` as written (no delimiter added): the header, then the record sealed
    /// with the key and nonce both ends derive (recomputed here from the RFC 8291 steps).
    static func seal(
        _ record: [UInt8], receiver: P256KeyAgreementKey, sender: P256KeyAgreementKey
    ) throws -> [UInt8] {
        let salt = Vector.salt
        let ecdh = try sender.sharedSecret(with: receiver)
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiver.publicPoint + sender.publicPoint
        let ikm = try HKDF.sha256(salt: Vector.authSecret, ikm: ecdh, info: keyInfo, count: 32)
        let key = try HKDF.sha256(
            salt: salt, ikm: ikm, info: Array("Content-Encoding: aes128gcm".utf8) + [0], count: 16)
        let nonce = try HKDF.sha256(salt: salt, ikm: ikm, info: Array("Content-Encoding: nonce".utf8) + [0], count: 12)
        return salt + [0, 0, 0x10, 0] + [65] + sender.publicPoint + (try AES128GCM.seal(record, key: key, nonce: nonce))
    }
}
