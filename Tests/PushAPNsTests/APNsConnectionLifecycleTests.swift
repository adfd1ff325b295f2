import PushAPNs
import PushCore
import PushCredentials
import PushDelivery
import PushMockAPNs
import PushPosix
import PushTLS
import PushTransport
import Testing

/// Accepts TCP and never says anything (a stalled TLS handshake).
private final class SilentHandler: ConnectionHandler {
    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {}
    func connectionDidClose(_ connection: Connection, error: IOError?) {}
}

@Suite("APNs connection life cycle", .timeLimit(.minutes(1)))
struct APNsConnectionLifecycleTests {
    static func notification(_ tokens: [String]) -> PreparedNotification {
        PreparedNotification(
            payload: Array("{}".utf8), pushType: .alert, topic: "com.example.app", priority: 10, expiration: nil,
            collapseID: nil, apnsID: nil, tokens: tokens)
    }

    static func client(port: Int, group: EventLoopGroup, _ adjust: (inout ProviderClientConfiguration) -> Void) throws
        -> APNsClient
    {
        var configuration = ProviderClientConfiguration()
        adjust(&configuration)
        let key = try ES256Signer.generateP8()
        let endpoint = HTTPSOrigin(host: "127.0.0.1", port: port)
        let tokens = ProviderTokenCache(
            teamID: "T", keyID: "K", signer: try ES256Signer(p8PEM: key.privateKeyPEM), clock: { 0 })
        return ProviderClient(
            name: "x", endpoint: endpoint,
            dialect: APNsDialect(credentials: .providerToken(tokens), authority: endpoint.authority),
            tlsContext: try TLSContext.client(), configuration: configuration, group: group)
    }

    static func send(_ client: APNsClient, token: Int, deadline: Duration) async -> DeliveryResult {
        let collector = DeliveryCollector(placeholders: [
            DeliveryResult(notificationIndex: 0, token: "t", status: .failed, code: .deadlineExceeded)
        ])
        #expect(client.reserve(1))
        client.send(
            .apns(notification([APNsClientTests.hex64(token)])), notificationIndex: 0, firstSlot: 0,
            collector: collector)
        return await collector.results(deadline: .now + deadline)[0]
    }

    @Test("a TLS handshake that never finishes is cut at connectTimeout and the request fails with a reason")
    func stalledHandshake() async throws {
        let group = try EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let listener = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in SilentHandler() }
        defer { listener.close() }
        let client = try Self.client(port: listener.localPort, group: group) {
            $0.connectTimeout = .milliseconds(300)
            $0.maxConnectAttempts = 1
        }
        let result = await Self.send(client, token: 1, deadline: .seconds(10))
        #expect(result.status == .failed)
        #expect(result.reason.hasPrefix("ProviderUnreachable"), "\(result.reason)")
        #expect(result.code == .unreachable)
        #expect(client.heldRequests == 0, "room is given back")
    }

    @Test("shutdown is final: in-flight requests fail with Shutdown and nothing reconnects")
    func shutdownIsFinal() async throws {
        let fixture = try APNsClientTests.Fixture(mock: { $0.responseDelay = .milliseconds(500) })
        defer {
            fixture.mock.close()
            fixture.group.shutdown()
        }
        let sending = Task { await fixture.send(tokens: APNsClientTests.tokens(5), deadline: .now + .seconds(20)) }
        try await Task.sleep(for: .milliseconds(300))
        let opened = fixture.mock.stats.connectionsOpened
        fixture.client.shutdown()
        let results = await sending.value
        try await Task.sleep(for: .milliseconds(700))
        #expect(fixture.mock.stats.connectionsOpened == opened, "no new connection after shutdown")
        #expect(results.allSatisfy { $0.status == .delivered || $0.reason == "Shutdown" })
        #expect(fixture.client.heldRequests == 0)
    }

    @Test("a send after shutdown fails at once instead of waiting in a wedged queue")
    func sendAfterShutdown() async throws {
        let group = try EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let listener = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in SilentHandler() }
        let port = listener.localPort
        listener.close()
        let client = try Self.client(port: port, group: group) {
            $0.retry = RetryPolicy(maxAttempts: 3, initialBackoff: .seconds(2), maxBackoff: .seconds(2))
        }
        let first = Task { await Self.send(client, token: 1, deadline: .seconds(10)) }
        try await Task.sleep(for: .milliseconds(300))
        client.shutdown()
        #expect(await first.value.reason == "Shutdown")
        let started = ContinuousClock.now
        let second = await Self.send(client, token: 2, deadline: .seconds(10))
        #expect(second.reason == "Shutdown")
        #expect(second.code == .shutdown)
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(client.heldRequests == 0)
    }
}
