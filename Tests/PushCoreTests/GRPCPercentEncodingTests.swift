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
