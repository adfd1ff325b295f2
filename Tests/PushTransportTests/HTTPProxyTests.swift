import Testing

@testable import PushTransport

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

    @Test("the credentials become a Basic Proxy-Authorization value; none without user info")
    func authorization() throws {
        #expect(try HTTPProxy(url: "http://alice:s3cret@proxy:3128").authorization == "Basic YWxpY2U6czNjcmV0")
        #expect(try HTTPProxy(url: "http://alice@proxy:3128").authorization == "Basic YWxpY2U=")
        #expect(try HTTPProxy(url: "http://proxy:3128").authorization == nil)
        #expect(try HTTPProxy(url: "HTTP://Proxy:3128/") == HTTPProxy(url: "http://Proxy:3128"), "scheme in any case")
    }

    @Test("a rejected proxy URL is named in the error, its password replaced by ***")
    func rejectedURL() throws {
        do {
            _ = try HTTPProxy(url: "https://bob:hunter2@proxy:443")
            Issue.record("an HTTPS proxy URL was accepted")
        } catch {
            #expect(error.description.hasPrefix("proxy https://***@proxy:443: not http://"), "\(error)")
            #expect(error.description.contains("HTTPS proxy URL is not supported"))
        }
        #expect(HTTPProxy.redacted("http://bob:hunter2@proxy:8080") == "http://***@proxy:8080")
        #expect(HTTPProxy.redacted("http://bob:p@ss@proxy:8080") == "http://***@proxy:8080", "the last @ ends it")
        #expect(HTTPProxy.redacted("http://proxy:8080") == "http://proxy:8080")
        // Without its scheme (a common slip in HTTPS_PROXY) the URL is rejected, and still redacted.
        #expect(HTTPProxy.redacted("bob:hunter2@proxy:3128") == "***@proxy:3128")
        #expect(HTTPProxy.redacted("proxy:3128") == "proxy:3128")
        do {
            _ = try ProxyChoice.fromEnvironment(["HTTPS_PROXY": "bob:hunter2@proxy:3128"])
            Issue.record("a proxy URL without a scheme was accepted")
        } catch {
            #expect(error.description.hasPrefix("HTTPS_PROXY: proxy ***@proxy:3128: not http://"), "\(error)")
            #expect(!error.description.contains("hunter2"))
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

    @Test("the environment: either spelling, the proxy's port kept, an empty HTTPS_PROXY means none")
    func environmentSpellings() throws {
        let upper = try ProxyChoice.fromEnvironment(["HTTPS_PROXY": "http://proxy.corp:3128"])
        #expect(upper == ProxyChoice(proxy: try HTTPProxy(url: "http://proxy.corp:3128"), bypass: []))
        #expect(upper.proxy(for: "fcm.googleapis.com")?.port == 3128)
        let lower = try ProxyChoice.fromEnvironment(["https_proxy": "http://proxy.corp", "no_proxy": "Example.COM"])
        #expect(lower.proxy?.port == 80)
        #expect(lower.bypass == ["example.com"])
        #expect(try ProxyChoice.fromEnvironment(["HTTPS_PROXY": ""]) == .direct)
        #expect(try ProxyChoice.fromEnvironment(["NO_PROXY": "*", "HTTP_PROXY": "http://p:1"]) == .direct)
    }

    @Test("NO_PROXY entries: spaces, tabs and empty entries dropped, names compared without case")
    func bypassList() throws {
        let choice = try ProxyChoice.fromEnvironment([
            "HTTPS_PROXY": "http://proxy:8080", "NO_PROXY": " ,\tAPI.Push.Apple.com\t,, 127.0.0.1 ,",
        ])
        #expect(choice.bypass == ["api.push.apple.com", "127.0.0.1"])
        #expect(choice.proxy(for: "api.push.apple.com") == nil)
        #expect(choice.proxy(for: "API.PUSH.APPLE.COM") == nil)
        #expect(choice.proxy(for: "api.development.push.apple.com")?.host == "proxy")
        #expect(choice.proxy(for: "127.0.0.1") == nil)
        #expect(choice.proxy(for: "127.0.0.2")?.host == "proxy")
    }

    @Test("a domain suffix covers the domain and its subdomains, not names that merely end the same")
    func suffixes() throws {
        let proxy = try HTTPProxy(url: "http://proxy:8080")
        for entry in ["googleapis.com", ".googleapis.com"] {
            let choice = ProxyChoice(proxy: proxy, bypass: [entry])
            #expect(choice.proxy(for: "googleapis.com") == nil, "\(entry)")
            #expect(choice.proxy(for: "fcm.googleapis.com") == nil, "\(entry)")
            #expect(choice.proxy(for: "a.b.googleapis.com") == nil, "\(entry)")
            #expect(choice.proxy(for: "evilgoogleapis.com") == proxy, "\(entry)")
            #expect(choice.proxy(for: "googleapis.com.evil") == proxy, "\(entry)")
        }
    }

    @Test("* anywhere in the list bypasses every host; no proxy means a direct connection")
    func wildcardAndDirect() throws {
        let proxy = try HTTPProxy(url: "http://proxy:8080")
        #expect(ProxyChoice(proxy: proxy, bypass: ["example.org", "*"]).proxy(for: "api.push.apple.com") == nil)
        #expect(ProxyChoice(proxy: proxy).proxy(for: "api.push.apple.com") == proxy)
        #expect(ProxyChoice(proxy: nil, bypass: []).proxy(for: "api.push.apple.com") == nil)
        #expect(ProxyChoice.direct.proxy(for: "localhost") == nil)
    }

    @Test("an unusable HTTPS_PROXY is an error that names the variable, password hidden")
    func environmentError() {
        do {
            _ = try ProxyChoice.fromEnvironment(["HTTPS_PROXY": "https://bob:hunter2@proxy:443"])
            Issue.record("an HTTPS proxy URL was accepted")
        } catch {
            #expect(error.description.hasPrefix("HTTPS_PROXY: proxy https://***@proxy:443"), "\(error)")
            #expect(!error.description.contains("hunter2"))
        }
    }
}
