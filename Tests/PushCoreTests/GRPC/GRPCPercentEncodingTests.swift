import Testing

@testable import PushCore

@Suite("GRPCPercentEncoding")
struct GRPCPercentEncodingTests {
    @Test("printable ASCII passes through unchanged")
    func printable() {
        let text = "notifications[3].tokens[7]: APNs device token must be 64-200 hex digits ~!"
        #expect(GRPCPercentEncoding.encode(text) == text)
    }

    @Test("percent, controls and non-ASCII become upper-case %XX per UTF-8 byte")
    func escapes() {
        #expect(GRPCPercentEncoding.encode("100%") == "100%25")
        #expect(GRPCPercentEncoding.encode("a\nb\tc") == "a%0Ab%09c")
        #expect(GRPCPercentEncoding.encode("café") == "caf%C3%A9")
        #expect(GRPCPercentEncoding.encode("😀") == "%F0%9F%98%80")
        #expect(GRPCPercentEncoding.encode("\u{7F}") == "%7F")
    }

    @Test("decoding reverses encoding")
    func roundTrip() {
        for text in ["", "plain", "100% sure", "naïve ☃ 😀\r\n", "%%%", "a%2"] {
            #expect(GRPCPercentEncoding.decode(GRPCPercentEncoding.encode(text)) == text)
        }
    }

    @Test("decoding accepts lower-case hex and never fails on bad input")
    func lenientDecode() {
        #expect(GRPCPercentEncoding.decode("caf%c3%a9") == "café")
        #expect(GRPCPercentEncoding.decode("50%") == "50%")
        #expect(GRPCPercentEncoding.decode("%zz%4") == "%zz%4")
        #expect(GRPCPercentEncoding.decode("%41%42") == "AB")
        // A lone continuation byte is not UTF-8; it becomes U+FFFD rather than an error.
        #expect(GRPCPercentEncoding.decode("x%80y") == "x\u{FFFD}y")
    }
}

@Suite("Capped texts: grpc-message, echoed values")
struct TextCapTests {
    @Test("a grpc-message is cut on a character boundary so its encoded form fits, with an ellipsis")
    func cappedEncoding() {
        #expect(GRPCPercentEncoding.encode("short", maxBytes: 2048) == "short")
        let ascii = GRPCPercentEncoding.encode(String(repeating: "a", count: 70_000), maxBytes: 2048)
        #expect(ascii.utf8.count <= 2048 && ascii.hasSuffix("%E2%80%A6"))
        let latin = GRPCPercentEncoding.encode(String(repeating: "\u{ff}", count: 25_000), maxBytes: 2048)
        #expect(latin.utf8.count <= 2048)
        // Whole characters only: every escape is complete, so it decodes back without U+FFFD.
        let decoded = GRPCPercentEncoding.decode(latin)
        #expect(!decoded.contains("\u{fffd}") && decoded.hasSuffix("…"))
        #expect(decoded.dropLast().allSatisfy { $0 == "\u{ff}" })
    }

    @Test("prefix keeps whole characters within the byte limit")
    func prefix() {
        #expect(TextCap.prefix("hello", maxBytes: 10) == "hello")
        let cut = TextCap.prefix(String(repeating: "é", count: 100), maxBytes: 11)
        #expect(cut == "éééé…")  // 4 × 2 bytes + 3 for the ellipsis
        #expect(cut.utf8.count <= 11)
    }

    @Test("an echoed value is quoted, cut to 128 characters, and says how long it was")
    func quoted() {
        #expect(TextCap.quoted("demo") == "\"demo\"")
        let long = TextCap.quoted(String(repeating: "a", count: 70_000))
        #expect(long.hasPrefix("\"aaaa") && long.hasSuffix("…\" (70000 bytes)"))
        #expect(long.count < 160)
    }
}
