import PushTransport
import Testing

@Suite("HTTPS origins")
struct HTTPSOriginTests {
    @Test("https://host[:port][/]: the host, the port (443 by default), and the :authority")
    func goodURLs() throws {
        let apple = try #require(HTTPSOrigin(url: "https://api.push.apple.com"))
        #expect(apple == HTTPSOrigin(host: "api.push.apple.com", port: 443))
        #expect(apple.authority == "api.push.apple.com", "port 443 is left out of :authority")
        #expect(HTTPSOrigin(url: "https://api.push.apple.com/") == apple, "a trailing / is allowed")

        let mock = try #require(HTTPSOrigin(url: "https://127.0.0.1:8443/"))
        #expect(mock.host == "127.0.0.1" && mock.port == 8443)
        #expect(mock.authority == "127.0.0.1:8443")
        #expect(HTTPSOrigin(url: "https://localhost:1")?.port == 1)
        #expect(HTTPSOrigin(url: "https://localhost:65535")?.port == 65535)
        #expect(HTTPSOrigin(url: "https://host:443")?.authority == "host")
    }

    @Test("IPv6 literals in brackets: the host without them, :authority with them")
    func ipv6() throws {
        let loopback = try #require(HTTPSOrigin(url: "https://[::1]:9000"))
        #expect(loopback == HTTPSOrigin(host: "::1", port: 9000))
        #expect(loopback.authority == "[::1]:9000")
        let defaultPort = try #require(HTTPSOrigin(url: "https://[2001:db8::1]/"))
        #expect(defaultPort == HTTPSOrigin(host: "2001:db8::1", port: 443))
        #expect(defaultPort.authority == "[2001:db8::1]")
        #expect(HTTPSOrigin(host: "fe80::2", port: 8443).authority == "[fe80::2]:8443")
    }

    @Test(
        "not an origin: another scheme, no host, a bad port, a path, an unclosed bracket",
        arguments: [
            "http://api.push.apple.com", "api.push.apple.com", "https://", "https:///", "https://:443",
            "https://host:", "https://host:0", "https://host:65536", "https://host:https", "https://host/3/device",
            "https://host:443/token", "https://[::1", "https://[::1]9000", "https://[::1]:0", "https://[]:443",
            "https://[]",
            // An unbracketed IPv6 address, a query, fragment, space or user left in the authority,
            // a port that is not plain digits, junk in brackets.
            "https://::1", "https://fe80::1", "https://x?q=1", "https://x#part", "https://a b", "https://user@host",
            "https://host:+443", "https://host: 443", "https://host:0443x", "https://[::1]x", "https://[x::1]",
            "https://[::1]:+1", "https://[127.0.0.1]",
        ])
    func badURLs(url: String) {
        #expect(HTTPSOrigin(url: url) == nil)
    }

    @Test("parse(url:): the origin and the path (/ when there is none); no query, fragment or space")
    func parseWithPath() throws {
        let (google, path) = try #require(HTTPSOrigin.parse(url: "https://oauth2.googleapis.com/token"))
        #expect(google == HTTPSOrigin(host: "oauth2.googleapis.com", port: 443))
        #expect(path == "/token")
        let (amazon, amazonPath) = try #require(HTTPSOrigin.parse(url: "https://[::1]:8443/auth/o2/token"))
        #expect(amazon == HTTPSOrigin(host: "::1", port: 8443))
        #expect(amazonPath == "/auth/o2/token")
        #expect(HTTPSOrigin.parse(url: "https://127.0.0.1:9443")?.path == "/")
        for bad in [
            "https://x/token?a=b", "https://x/token#part", "https://x/a token", "http://x/token", "https://:1/token",
            "https:///token",
        ] {
            #expect(HTTPSOrigin.parse(url: bad) == nil, "\(bad)")
        }
    }
}
