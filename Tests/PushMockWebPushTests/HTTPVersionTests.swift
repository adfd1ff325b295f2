import PushCore
import PushHTTP2
import PushMockSupport
import PushMockTesting
import PushMockWebPush
import PushPosix
import PushTLS
import PushTransport
import Testing

@Suite("Mock Web Push: HTTP/2 and HTTP/1.1 by ALPN", .timeLimit(.minutes(1)))
struct HTTPVersionTests {
    /// One request over a fresh connection whose client offers `policy`'s protocols, through the
    /// gateway's own one-shot client.
    static func exchange(
        _ harness: Harness, policy: HTTPVersionPolicy, path: String, headers: [(String, String)], body: [UInt8]
    ) async throws -> HTTPExchange.Response {
        let context = try TLSContext.client(
            caPEM: harness.server.certificatePEM!, alpn: policy.alpn, useSystemRoots: false)
        let head =
            [
                HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "https"), HTTP2Header(":path", path),
                HTTP2Header(":authority", "127.0.0.1:\(harness.server.localPort)"),
            ] + headers.map { HTTP2Header($0.0, $0.1) }
        return try await HTTPExchange.send(
            host: "127.0.0.1", port: harness.server.localPort, headers: head, body: body, tlsContext: context,
            loop: harness.group.next(), timeout: .seconds(10))
    }

    @Test("one listener: an HTTP/1.1 client and an HTTP/2 client both push and fetch subscriptions")
    func bothVersions() async throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        for policy in [HTTPVersionPolicy.http1, .http2, .auto] {
            let push = try harness.push(policy.rawValue == "auto" ? "via auto" : "via \(policy.rawValue)")
            let response = try await Self.exchange(
                harness, policy: policy, path: push.path, headers: push.headers, body: push.body)
            #expect(response.status == 201, "\(policy)")
            #expect(response.headers.first { $0.nameString == "location" } != nil, "\(policy)")
            let subscriptions = try await Self.exchange(
                harness, policy: policy, path: "/_mock/subscriptions", headers: [], body: Array(#"{"count":2}"#.utf8))
            #expect(subscriptions.status == 200)
            guard case .array(let items) = try JSONParser.parse(subscriptions.body) else {
                throw ClientError("not an array")
            }
            #expect(items.count == 2)
        }
        #expect(harness.server.stats.recentMessages.map(\.plaintextString) == ["via 1.1", "via 2", "via auto"])
        #expect(harness.server.stats.handshakeFailures == 0)
    }

    @Test("http1-only and http2-only listeners refuse clients that offer only the other version")
    func singleVersion() async throws {
        let h1 = try Harness {
            $0.offersBothVersions = false
            $0.http1 = true
        }
        defer { h1.shutdown() }
        let push = try h1.push()
        #expect(
            try await Self.exchange(h1, policy: .auto, path: push.path, headers: push.headers, body: push.body).status
                == 201)
        #expect(throws: (any Error).self, "an HTTP/2-only client") { try h1.client() }
        let h2 = try Harness { $0.offersBothVersions = false }
        defer { h2.shutdown() }
        let push2 = try h2.push()
        #expect(
            try await Self.exchange(h2, policy: .auto, path: push2.path, headers: push2.headers, body: push2.body)
                .status == 201)
        await #expect(throws: (any Error).self, "an HTTP/1.1-only client") {
            try await Self.exchange(h2, policy: .http1, path: push2.path, headers: push2.headers, body: push2.body)
        }
    }
}
