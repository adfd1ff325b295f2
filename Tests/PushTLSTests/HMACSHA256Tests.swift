import PushTLS
import Testing

@Suite("HMAC-SHA-256")
struct HMACSHA256Tests {
    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    private static func code(_ key: [UInt8], _ message: String) -> String {
        hex(HMACSHA256.authenticationCode(key: key, message: Array(message.utf8)))
    }

    // RFC 4231 section 4, test cases 1-7 (HMAC-SHA-256 rows).
    @Test("RFC 4231 test cases 1-4: short keys and data")
    func shortKeys() {
        #expect(
            Self.code([UInt8](repeating: 0x0b, count: 20), "Hi There")
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            Self.code(Array("Jefe".utf8), "what do ya want for nothing?")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            Self.hex(
                HMACSHA256.authenticationCode(
                    key: [UInt8](repeating: 0xaa, count: 20), message: [UInt8](repeating: 0xdd, count: 50)))
                == "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe")
        #expect(
            Self.hex(
                HMACSHA256.authenticationCode(key: Array(1...25), message: [UInt8](repeating: 0xcd, count: 50)))
                == "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b")
    }

    @Test("RFC 4231 test case 5: the first 128 bits")
    func truncation() {
        #expect(
            Self.code([UInt8](repeating: 0x0c, count: 20), "Test With Truncation").prefix(32)
                == "a3b6167473100ee06e0c796c2955552b")
    }

    @Test("RFC 4231 test cases 6-7: keys longer than the block size are hashed first")
    func longKeys() {
        let key = [UInt8](repeating: 0xaa, count: 131)
        #expect(
            Self.code(key, "Test Using Larger Than Block-Size Key - Hash Key First")
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(
            Self.code(
                key,
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs to"
                    + " be hashed before being used by the HMAC algorithm.")
                == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    @Test("an empty key and an empty message are allowed (Python's hmac agrees)")
    func empty() {
        #expect(Self.code([], "") == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
