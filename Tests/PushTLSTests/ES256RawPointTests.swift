import PushTLS
import Testing

@Suite("ES256 with raw P-256 points (VAPID's k=)")
struct ES256RawPointTests {
    @Test("a signer's raw point verifies its signatures; other points and bad bytes do not")
    func rawPoint() throws {
        let signer = try ES256Signer(p8PEM: try ES256Signer.generateP8().privateKeyPEM)
        let point = try signer.publicPoint()
        #expect(point.count == 65 && point[0] == 0x04)
        let message = Array("header.claims".utf8)
        let signature = try signer.sign(message)
        let verifier = try #require(ES256Verifier(uncompressedPoint: point))
        #expect(verifier.verify(message, rawSignature: signature))
        #expect(!verifier.verify(Array("header.claimz".utf8), rawSignature: signature))
        let other = try ES256Signer(p8PEM: try ES256Signer.generateP8().privateKeyPEM)
        let otherVerifier = try #require(ES256Verifier(uncompressedPoint: try other.publicPoint()))
        #expect(!otherVerifier.verify(message, rawSignature: signature))
        var offCurve = point
        offCurve[64] ^= 1
        #expect(ES256Verifier(uncompressedPoint: offCurve) == nil)
        #expect(ES256Verifier(uncompressedPoint: Array(point.dropFirst())) == nil)
    }
}
