import PushTLS
import PushWebPushCrypto
import Testing

/// RFC 8291 (Message Encryption for Web Push), Appendix A: fixed keys and salt, so the body is
/// known byte for byte.
@Suite("Web Push encryption (RFC 8291)")
struct WebPushEncryptionTests {
    static func bytes(_ base64url: String) -> [UInt8] { base64URLDecode(base64url)! }

    static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
    static let asPrivate = bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw")
    static let asPublic = bytes(
        "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8")
    static let uaPublic = bytes(
        "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
    static let authSecret = bytes("BTBZMqHH6r4Tts7J_aSIgg")
    static let salt = bytes("DGv6ra1nlYgDCS1FRnbzlw")
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A"
        + "_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    @Test("Appendix A: the encrypted body, byte for byte")
    func appendixA() throws {
        let sender = try #require(P256KeyAgreementKey.keyPair(point: Self.asPublic, privateScalar: Self.asPrivate))
        let receiver = try #require(P256KeyAgreementKey.publicKey(point: Self.uaPublic))
        let body = try WebPushEncryption.encrypt(
            Self.plaintext, receiver: receiver, authSecret: Self.authSecret, sender: sender, salt: Self.salt)
        #expect(base64URLEncode(body) == Self.body)
        #expect(body.count == WebPushEncryption.headerSize + Self.plaintext.count + 1 + 16)
    }

    @Test("a fresh sender key gives a different body of the same shape")
    func freshKeys() throws {
        let receiver = try #require(P256KeyAgreementKey.publicKey(point: Self.uaPublic))
        let sender = try P256KeyAgreementKey.generate()
        #expect(sender.publicPoint.count == 65 && sender.publicPoint[0] == 0x04)
        let body = try WebPushEncryption.encrypt(
            Self.plaintext, receiver: receiver, authSecret: Self.authSecret, sender: sender, salt: Self.salt,
            padding: 7)
        #expect(body.count == 86 + Self.plaintext.count + 1 + 7 + 16)
        #expect(Array(body[21..<86]) == sender.publicPoint, "the header names the sender's key")
        #expect(base64URLEncode(body) != Self.body)
    }

    @Test("what is not a P-256 point is no key; sizes are checked")
    func badInput() throws {
        #expect(P256KeyAgreementKey.publicKey(point: Array(Self.uaPublic.dropLast())) == nil)
        var offCurve = Self.uaPublic
        offCurve[64] ^= 0x01
        #expect(P256KeyAgreementKey.publicKey(point: offCurve) == nil)
        #expect(P256KeyAgreementKey.publicKey(point: [0x02] + Self.uaPublic.dropFirst()) == nil)
        let receiver = try #require(P256KeyAgreementKey.publicKey(point: Self.uaPublic))
        let sender = try P256KeyAgreementKey.generate()
        #expect(throws: TLSError.self) {
            try WebPushEncryption.encrypt(
                Self.plaintext, receiver: receiver, authSecret: [1, 2, 3], sender: sender, salt: Self.salt)
        }
        let tooLong = [UInt8](repeating: 0x41, count: WebPushEncryption.maxPlaintext + 1)
        #expect(throws: TLSError.self) {
            try WebPushEncryption.encrypt(
                tooLong, receiver: receiver, authSecret: Self.authSecret, sender: sender, salt: Self.salt)
        }
        let fits = [UInt8](repeating: 0x41, count: WebPushEncryption.maxPlaintext)
        let full = try WebPushEncryption.encrypt(
            fits, receiver: receiver, authSecret: Self.authSecret, sender: sender, salt: Self.salt)
        #expect(full.count == 4096, "the largest plaintext makes a 4,096-byte body")
    }
}
