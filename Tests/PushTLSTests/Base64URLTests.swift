import PushTLS
import Testing

@Suite("base64url without padding")
struct Base64URLTests {
    /// RFC 4648 §10 vectors with the "=" padding removed (JWS form).
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"),
        ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 test vectors, unpadded", arguments: vectors)
    func rfcVectors(plain: String, encoded: String) {
        #expect(base64URLEncode(Array(plain.utf8)) == encoded)
        #expect(base64URLDecode(encoded) == Array(plain.utf8))
    }

    @Test("uses - and _ where standard base64 uses + and /")
    func urlAlphabet() {
        #expect(base64URLEncode([0xFB, 0xFF]) == "-_8")
        #expect(base64URLEncode([0xFB, 0xEF, 0xBE]) == "----")
        #expect(base64URLEncode([0xFF, 0xFF, 0xFF]) == "____")
        #expect(base64URLDecode("-_8") == [0xFB, 0xFF])
    }

    @Test("rejects padding, the standard alphabet, impossible lengths and stray bits")
    func rejectsMalformed() {
        #expect(base64URLDecode("Zg==") == nil)
        #expect(base64URLDecode("+/8") == nil)
        #expect(base64URLDecode("Zm9vY") == nil)
        #expect(base64URLDecode("Zh") == nil, "the last 4 bits must be zero")
        #expect(base64URLDecode("Zm 9v") == nil)
    }

    @Test("round-trips every length up to 300 bytes")
    func roundTrip() {
        for length in 0...300 {
            let bytes = randomBytes(length)
            #expect(base64URLDecode(base64URLEncode(bytes)) == bytes)
        }
    }
}
