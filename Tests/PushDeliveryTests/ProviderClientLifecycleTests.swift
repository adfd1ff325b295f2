import PushCore
import PushDelivery
import PushPosix
import PushTLS
import PushTestSupport
import PushTransport
import Testing

@Suite("Provider client life cycle", .timeLimit(.minutes(1)))
struct ProviderClientLifecycleTests {
    static func client(port: Int, group: EventLoopGroup, _ adjust: (inout ProviderClientConfiguration) -> Void) throws
        -> ProviderClient<FakeDialect>
    {
        var configuration = ProviderClientConfiguration()
        adjust(&configuration)
        let endpoint = HTTPSOrigin(host: "127.0.0.1", port: port)
        return ProviderClient(
            name: "x", endpoint: endpoint, dialect: FakeDialect(authority: endpoint.authority),
            tlsContext: try TLSContext.client(), configuration: configuration, group: group)
    }

    static func send(_ client: ProviderClient<FakeDialect>, token: Int, deadline: Duration) async -> DeliveryResult {
        await client.send(tokens: [TestTokens.hex64(token)], deadline: .now + deadline)[0]
    }

    @Test("a TLS handshake that never finishes is cut at connectTimeout and the request fails with a reason")
    func stalledHandshake() async throws {
        let group = try EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let listener = try SilentListener(group: group)
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
        let fixture = try FakeProviderFixture(responseDelay: .milliseconds(500))
        defer { fixture.stop() }
        let sending = Task { await fixture.send(tokens: TestTokens.hex64(count: 5), deadline: .now + .seconds(20)) }
        try await Task.sleep(for: .milliseconds(300))
        let opened = fixture.server.connectionsOpened
        fixture.client.shutdown()
        let results = await sending.value
        try await Task.sleep(for: .milliseconds(700))
        #expect(fixture.server.connectionsOpened == opened, "no new connection after shutdown")
        #expect(results.allSatisfy { $0.status == .delivered || $0.reason == "Shutdown" })
        #expect(fixture.client.heldRequests == 0)
    }

    @Test("a send after shutdown fails at once instead of waiting in a wedged queue")
    func sendAfterShutdown() async throws {
        let group = try EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try Self.client(port: try closedPort(), group: group) {
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

    @Test("an unreachable provider fails the requests with a clear reason")
    func unreachable() async throws {
        let group = try EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try Self.client(port: try closedPort(), group: group) {
            $0.retry = RetryPolicy(maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(20))
        }
        let result = await Self.send(client, token: 1, deadline: .seconds(20))
        #expect(result.status == .failed)
        #expect(result.reason.hasPrefix("ProviderUnreachable"))
        #expect(client.heldRequests == 0, "room is given back")
    }

    @Test("at the deadline the Send answers with what is known; the rest FAILED DeadlineExceeded")
    func deadline() async throws {
        // The provider answers long after the deadline; the bound only has to show the Send did not
        // wait for it (a loaded parallel run once took 3.2 s to answer a 300 ms deadline).
        let fixture = try FakeProviderFixture(responseDelay: .seconds(60))
        defer { fixture.stop() }
        let start = ContinuousClock.now
        let results = await fixture.send(tokens: TestTokens.hex64(count: 3), deadline: .now + .milliseconds(300))
        #expect(ContinuousClock.now - start < .seconds(30))
        #expect(results.allSatisfy { $0.status == .failed && $0.reason == "DeadlineExceeded" })
    }

    @Test("in flight never exceeds the server's limit")
    func respectsConcurrencyLimit() async throws {
        let fixture = try FakeProviderFixture(responseDelay: .milliseconds(2), maxConcurrentStreams: 25)
        defer { fixture.stop() }
        let results = await fixture.send(tokens: TestTokens.hex64(count: 1000))
        #expect(results.allSatisfy { $0.status == .delivered })
        #expect(fixture.server.maxInFlight <= 25)
        #expect(fixture.server.maxInFlight >= 20, "and uses what it is given")
        #expect(await fixture.client.peakStreamsInFlight() <= 25)
    }
}
