import PushCore
import PushDelivery
import PushPosix
import PushTLS
import PushTestSupport
import PushTransport
import Testing

@Suite("Provider connection liveness", .timeLimit(.minutes(1)))
struct ProviderConnectionLivenessTests {
    @Test("a connection that goes silent is found dead by PING and replaced; its streams are resent")
    func deadConnectionIsReplaced() async throws {
        let group = try EventLoopGroup(loopCount: 2)
        defer { group.shutdown() }
        let server = try LoopbackProvider(group: group, responseDelay: .milliseconds(300))
        defer { server.close() }
        let relay = try FreezableRelay(group: group, targetPort: server.localPort)
        var configuration = ProviderClientConfiguration()
        configuration.pingInterval = .milliseconds(200)
        configuration.pingTimeout = .milliseconds(200)
        configuration.retry = RetryPolicy(
            maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(20))
        let endpoint = HTTPSOrigin(host: "127.0.0.1", port: relay.port)
        let client = ProviderClient(
            name: "t", endpoint: endpoint, dialect: FakeDialect(authority: endpoint.authority),
            tlsContext: try TLSContext.client(caPEM: server.certificatePEM, useSystemRoots: false),
            configuration: configuration, group: group)
        defer { client.shutdown() }

        // Warm up: one delivery over the relay.
        let first = await client.send(tokens: [TestTokens.hex64(1)], deadline: .now + .seconds(20))
        #expect(first[0].status == .delivered)
        let connectionsBefore = server.connectionsOpened

        // The network dies under a request in flight: PING finds out, the connection is replaced, and
        // the request goes out again on the new one.
        let sending = Task { await client.send(tokens: [TestTokens.hex64(2)], deadline: .now + .seconds(20)) }
        try await Task.sleep(for: .milliseconds(100))
        relay.freeze()
        let results = await sending.value
        #expect(results[0].status == .delivered, "\(results[0].reason)")
        #expect(results[0].attempts == 2)
        #expect(server.connectionsOpened == connectionsBefore + 1)
    }
}
