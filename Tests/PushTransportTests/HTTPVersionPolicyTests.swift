import PushTransport
import Testing

@Suite("HTTP version policy")
struct HTTPVersionPolicyTests {
    @Test("what a client offers by ALPN for each policy, most preferred first")
    func alpn() {
        #expect(HTTPVersionPolicy.auto.alpn == ["h2", "http/1.1"])
        #expect(HTTPVersionPolicy.http2.alpn == ["h2"])
        #expect(HTTPVersionPolicy.http1.alpn == ["http/1.1"])
    }

    @Test("the configuration's spellings (http_version): auto, 2, 1.1 and nothing else")
    func spellings() {
        #expect(HTTPVersionPolicy.allCases.map(\.rawValue) == ["auto", "2", "1.1"])
        #expect(HTTPVersionPolicy(rawValue: "1.1") == .http1)
        #expect(HTTPVersionPolicy(rawValue: "2") == .http2)
        for other in ["h2", "http/1.1", "1", "2.0", "AUTO", ""] {
            #expect(HTTPVersionPolicy(rawValue: other) == nil, "\(other)")
        }
        #expect(HTTPVersion.http2.rawValue == "2")
        #expect(HTTPVersion.http1.rawValue == "1.1")
    }

    @Test("a TransportError prints as its message")
    func transportError() {
        let error: any Error = TransportError("the server chose \"spdy/3\" by ALPN, which this client did not offer")
        #expect("\(error)" == "the server chose \"spdy/3\" by ALPN, which this client did not offer")
    }
}
