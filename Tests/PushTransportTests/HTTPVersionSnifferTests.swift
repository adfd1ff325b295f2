import Testing

@testable import PushTransport

@Suite("HTTP version sniffing on cleartext")
struct HTTPVersionSnifferTests {
    @Test("the HTTP/2 preface is HTTP/2; its proper prefixes wait; anything else is HTTP/1.1")
    func sniff() {
        let preface = HTTPVersionSniffer.http2Preface
        #expect(HTTPVersionSniffer.version(of: preface) == .http2)
        #expect(HTTPVersionSniffer.version(of: preface + [0, 0, 0]) == .http2)
        for count in 0..<preface.count {
            #expect(HTTPVersionSniffer.version(of: preface.prefix(count)) == nil)
        }
        #expect(HTTPVersionSniffer.version(of: Array("POST / HTTP/1.1\r\n".utf8)) == .http1)
        #expect(HTTPVersionSniffer.version(of: Array("PRI * HTTP/1.1".utf8)) == .http1)
        #expect(HTTPVersionSniffer.version(of: [0x16, 0x03, 0x01]) == .http1)
    }
}
