import PushTransport
import Testing

@Suite("HTTP proxy settings")
struct HTTPProxyTests {
    @Test("a proxy URL: host, port (80 by default), Basic credentials never shown")
    func url() throws {
        let plain = try HTTPProxy(url: "http://proxy.corp:3128")
        #expect(plain.host == "proxy.corp" && plain.port == 3128)
        #expect(plain.description == "http://proxy.corp:3128")
        let secret = try HTTPProxy(url: "http://alice:s3cret@10.0.0.1/")
        #expect(secret.port == 80)
        #expect(secret.description == "http://***@10.0.0.1:80")
        #expect(!secret.description.contains("s3cret"))
        for bad in ["https://proxy:443", "proxy:3128", "http://", "http://proxy:3128/path", "ftp://x"] {
            #expect(throws: TransportError.self, "\(bad)") { _ = try HTTPProxy(url: bad) }
        }
        do {
            _ = try HTTPProxy(url: "https://bob:hunter2@proxy:443")
        } catch {
            #expect(!error.description.contains("hunter2"), "\(error)")
        }
    }

    @Test("HTTPS_PROXY and NO_PROXY: exact names, domain suffixes, and * ")
    func environment() throws {
        let choice = try ProxyChoice.fromEnvironment([
            "HTTPS_PROXY": "http://proxy:8080", "NO_PROXY": "localhost, .internal.example,example.org",
        ])
        #expect(choice.proxy(for: "api.push.apple.com")?.host == "proxy")
        #expect(choice.proxy(for: "localhost") == nil)
        #expect(choice.proxy(for: "a.internal.example") == nil)
        #expect(choice.proxy(for: "internal.example") == nil)
        #expect(choice.proxy(for: "fcm.example.org") == nil)
        #expect(choice.proxy(for: "notexample.org")?.host == "proxy")
        #expect(try ProxyChoice.fromEnvironment(["https_proxy": "http://p:1", "no_proxy": "*"]).proxy(for: "x") == nil)
        #expect(try ProxyChoice.fromEnvironment([:]) == .direct)
        #expect(throws: TransportError.self) { _ = try ProxyChoice.fromEnvironment(["HTTPS_PROXY": "socks5://p:1"]) }
    }
}
