import PushPosix
import PushTransport
import Testing

/// ``HTTPTransport/connect(host:port:timeout:proxy:completion:)`` through a ``ConnectProxy``.
@Suite("CONNECT tunnels")
struct ProxyTunnelTests {
    @Test(
        "through a CONNECT proxy: the tunnel to host:port with Basic credentials, then TLS end to end",
        arguments: [HTTPVersion.http1, .http2])
    func tunnel(version: HTTPVersion) async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "tunnel")
        defer { group.shutdown() }
        let server = try TestServer(version, group: group)
        defer { server.close() }
        let proxy = try ConnectProxy(.tunnel, group: group)
        defer { proxy.close() }
        let response = try await HTTPExchangeTests.post(
            to: server.port, loop: group.next(),
            proxy: try HTTPProxy(url: "http://alice:s3cret@127.0.0.1:\(proxy.port)"))
        #expect(response.status == 200)
        #expect(response.body == Array("hello".utf8))
        #expect(server.requests.first?.version == version)

        let head = try #require(proxy.requestHeads.first)
        #expect(proxy.requestHeads.count == 1)
        let lines = head.split(separator: "\r\n").map(String.init)
        #expect(lines.first == "CONNECT 127.0.0.1:\(server.port) HTTP/1.1")
        #expect(lines.contains("Host: 127.0.0.1:\(server.port)"), "\(lines)")
        #expect(lines.contains("Proxy-Authorization: Basic YWxpY2U6czNjcmV0"), "\(lines)")
        #expect(!lines.contains { $0.lowercased().hasPrefix("content-length") }, "a CONNECT has no body")
    }

    @Test("a proxy that refuses: its status in the error, and the hint about credentials for 407")
    func refused() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "tunnel-refused")
        defer { group.shutdown() }
        for status in [403, 407] {
            let proxy = try ConnectProxy(.refuse(status: status), group: group)
            defer { proxy.close() }
            do {
                let response = try await HTTPExchangeTests.post(
                    to: 9443, loop: group.next(), proxy: try HTTPProxy(url: "http://127.0.0.1:\(proxy.port)"))
                Issue.record("answered \(response.status) through a refusing proxy")
            } catch {
                let hint = status == 407 ? " (it wants credentials: http://user:password@host:port)" : ""
                #expect(
                    "\(error)"
                        == "proxy http://127.0.0.1:\(proxy.port) refused CONNECT 127.0.0.1:9443: HTTP \(status)\(hint)")
            }
            #expect(proxy.requestHeads.first?.hasPrefix("CONNECT 127.0.0.1:9443 HTTP/1.1\r\n") == true)
            #expect(proxy.requestHeads.first?.contains("Proxy-Authorization") == false)
        }
    }

    @Test("an IPv6 target is bracketed in the CONNECT line")
    func ipv6Target() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "tunnel-v6")
        defer { group.shutdown() }
        let proxy = try ConnectProxy(.refuse(status: 403), group: group)
        defer { proxy.close() }
        let loop = group.next()
        await #expect(throws: TransportError.self) {
            _ = try await HTTPExchange.send(
                host: "::1", port: 8443, headers: [], body: [], tlsContext: try clientContext(alpn: ["h2"]), loop: loop,
                timeout: .seconds(5), proxy: try HTTPProxy(url: "http://127.0.0.1:\(proxy.port)"))
        }
        let lines = proxy.requestHeads.first?.split(separator: "\r\n").map(String.init) ?? []
        #expect(lines.first == "CONNECT [::1]:8443 HTTP/1.1")
        #expect(lines.contains("Host: [::1]:8443"), "\(lines)")
    }

    @Test("a proxy that hangs up before answering CONNECT is named in the error")
    func hangUp() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "tunnel-hangup")
        defer { group.shutdown() }
        let proxy = try ConnectProxy(.hangUp, group: group)
        defer { proxy.close() }
        do {
            let response = try await HTTPExchangeTests.post(
                to: 9443, loop: group.next(), proxy: try HTTPProxy(url: "http://127.0.0.1:\(proxy.port)"))
            Issue.record("answered \(response.status)")
        } catch {
            #expect(
                "\(error)".hasPrefix(
                    "proxy http://127.0.0.1:\(proxy.port) closed the connection before answering CONNECT 127.0.0.1:9443"
                ),
                "\(error)")
        }
        #expect(proxy.requestHeads.count == 1)
    }
}
