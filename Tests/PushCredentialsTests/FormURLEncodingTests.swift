import PushCredentials
import PushTLS
import Testing

@Suite("application/x-www-form-urlencoded")
struct FormURLEncodingTests {
    @Test("the OAuth2 token request body is encoded as Google documents it")
    func tokenRequest() {
        let body = FormURLEncoding.encode([
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", "eyJh.eyJp-_.c2ln"),
        ])
        #expect(body == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=eyJh.eyJp-_.c2ln")
    }

    @Test("special characters, spaces and non-ASCII survive a round trip")
    func roundTrip() throws {
        let pairs = [("a b", "x+y=z&w"), ("empty", ""), ("ünï", "ç/%?#"), ("a b", "again")]
        let body = FormURLEncoding.encode(pairs)
        #expect(body == "a+b=x%2By%3Dz%26w&empty=&%C3%BCn%C3%AF=%C3%A7%2F%25%3F%23&a+b=again")
        let decoded = try #require(FormURLEncoding.decode(Array(body.utf8)))
        #expect(decoded.map { [$0.name, $0.value] } == pairs.map { [$0.0, $0.1] })
        #expect(FormURLEncoding.value("a b", in: decoded) == "x+y=z&w", "the first of repeated names")
    }

    @Test("lower-case escapes, pairs without '=' and empty pieces are accepted")
    func lenientForms() throws {
        let decoded = try #require(FormURLEncoding.decode(Array("x=%3a%3A&&flag&y=1=2".utf8)))
        #expect(decoded.map { [$0.name, $0.value] } == [["x", "::"], ["flag", ""], ["y", "1=2"]])
        #expect(FormURLEncoding.decode([UInt8]())?.isEmpty == true)
    }

    @Test("broken escapes and invalid UTF-8 are refused", arguments: ["a=%zz", "a=%4", "a=%", "%FF=1", "a=%C3"])
    func refused(_ body: String) {
        #expect(FormURLEncoding.decode(Array(body.utf8)) == nil)
    }

    @Test("a path segment: %XX decoded, + kept, no escape returned as it is, broken ones refused")
    func pathSegments() {
        let long = String(repeating: "Y29tLmFt", count: 100)
        #expect(FormURLEncoding.decodePathSegment(long[...]) == long)
        #expect(FormURLEncoding.decodePathSegment("amzn1.a%2Fb+c%3d"[...]) == "amzn1.a/b+c=")
        for broken in ["a%2", "a%zz", "%FF", "%C3"] {
            #expect(FormURLEncoding.decodePathSegment(broken[...]) == nil, "\(broken)")
        }
    }
}
