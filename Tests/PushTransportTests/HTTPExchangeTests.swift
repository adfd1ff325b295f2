import PushHTTP2
import PushPosix
import PushTLS
import PushTransport
import Testing

@Suite("One HTTP exchange")
struct HTTPExchangeTests {
    /// A token-endpoint style POST to `server`.
    static func post(
        to port: Int, loop: EventLoop, context: TLSContext? = nil, timeout: Duration = .seconds(5),
        maxBody: Int = 1 << 20, proxy: HTTPProxy? = nil
    ) async throws -> HTTPExchange.Response {
        try await HTTPExchange.send(
            host: "127.0.0.1", port: port,
            headers: [
                HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "https"),
                HTTP2Header(":path", "/auth/o2/token"), HTTP2Header(":authority", "127.0.0.1:\(port)"),
                HTTP2Header("content-type", "application/x-www-form-urlencoded"),
            ],
            body: Array("grant_type=client_credentials".utf8),
            tlsContext: try context ?? clientContext(alpn: HTTPVersionPolicy.auto.alpn), loop: loop,
            timeout: timeout, maxBody: maxBody, proxy: proxy)
    }

    @Test(
        "a POST answered in the version the server chose: status, headers and body; the request as sent",
        arguments: [HTTPVersion.http1, .http2])
    func exchange(version: HTTPVersion) async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "exchange")
        defer { group.shutdown() }
        let server = try TestServer(version, group: group)
        defer { server.close() }
        let response = try await Self.post(to: server.port, loop: group.next())
        #expect(response.status == 200)
        let servedBy = response.headers.first { $0.nameString == "x-served-by" }?.valueString
        #expect(servedBy == (version == .http2 ? "h2" : "http/1.1"))
        #expect(response.body == Array("hello".utf8))

        let request = try #require(server.requests.first)
        #expect(server.requests.count == 1)
        #expect(request.version == version)
        // In HTTP/1.1, :method and :path make the request line and :authority the Host.
        #expect(request.method == "POST")
        #expect(request.path == "/auth/o2/token")
        #expect(request.authority == "127.0.0.1:\(server.port)")
        #expect(request.header("content-type") == "application/x-www-form-urlencoded")
        #expect(!request.headers.contains { $0.name.hasPrefix(":") }, "\(request.headers)")
        #expect(request.body == Array("grant_type=client_credentials".utf8))
    }

    @Test("an answer larger than maxBody fails the exchange", arguments: [HTTPVersion.http1, .http2])
    func answerTooLarge(version: HTTPVersion) async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "exchange-large")
        defer { group.shutdown() }
        let server = try TestServer(version, group: group, answer: [UInt8](repeating: 0x61, count: 4096))
        defer { server.close() }
        do {
            let response = try await Self.post(to: server.port, loop: group.next(), maxBody: 1000)
            Issue.record("answered \(response.status) with \(response.body.count) bytes")
        } catch {
            #expect("\(error)" == "the answer is larger than 1000 bytes")
        }
        #expect(try await Self.post(to: server.port, loop: group.next(), maxBody: 4096).body.count == 4096)
    }

    @Test("a peer that never answers: the exchange fails at its timeout, naming the peer")
    func timeout() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "exchange-timeout")
        defer { group.shutdown() }
        let silent = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in Silent() }
        defer { silent.close() }
        let started = EventLoop.monotonicNow
        do {
            let response = try await Self.post(to: silent.localPort, loop: group.next(), timeout: .milliseconds(300))
            Issue.record("answered \(response.status)")
        } catch {
            #expect("\(error)".hasPrefix("no complete answer from 127.0.0.1:\(silent.localPort) within"), "\(error)")
        }
        let elapsed = Double(EventLoop.monotonicNow - started) / 1e9
        #expect(elapsed >= 0.3, "\(elapsed) s")
    }

    @Test("a server whose certificate the context does not trust: the handshake fails, nothing is sent")
    func untrustedServer() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "exchange-untrusted")
        defer { group.shutdown() }
        let server = try TestServer(.http2, group: group)
        defer { server.close() }
        let stranger = try SelfSignedCertificate.generate(commonName: "stranger", subjectAltNames: ["127.0.0.1"])
        let context = try TLSContext.client(caPEM: stranger.certificatePEM, alpn: ["h2"], useSystemRoots: false)
        do {
            let response = try await Self.post(to: server.port, loop: group.next(), context: context)
            Issue.record("answered \(response.status)")
        } catch {
            #expect(error is TLSError, "\(error)")
            #expect("\(error)".contains("certificate verification failed"), "\(error)")
        }
        #expect(server.requests.isEmpty)
    }
}

/// Accepts and reads nothing: a peer that never answers (not even the TLS handshake).
private final class Silent: ConnectionHandler {
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {}
    func connectionDidClose(_ connection: Connection, error: IOError?) {}
}
