import PushCore
import PushPosix
import PushTLS
import PushTestSupport
import PushTransport
import Testing

@testable import PushDelivery

/// Pools per origin, on real sockets: a dialect whose tokens name their origin (as Web Push
/// subscriptions name their push service) gets a pool per origin, bounded and closed when idle.
@Suite("Provider pools per origin", .timeLimit(.minutes(1)))
struct OriginPoolTests {
    /// Three servers with one certificate (home, b, c) and a client of them whose tokens starting
    /// with `b` or `c` go to that server.
    struct Fixture {
        let group: EventLoopGroup
        let home: LoopbackProvider
        let b: LoopbackProvider
        let c: LoopbackProvider
        let client: ProviderClient<FakeDialect>

        init(_ adjust: (inout ProviderClientConfiguration) -> Void = { _ in }) throws {
            group = try EventLoopGroup(loopCount: 2, namePrefix: "origin-test")
            let identity = try SelfSignedCertificate.generate(commonName: "loopback", subjectAltNames: ["127.0.0.1"])
            home = try LoopbackProvider(group: group, identity: identity)
            b = try LoopbackProvider(group: group, identity: identity)
            c = try LoopbackProvider(group: group, identity: identity)
            var configuration = ProviderClientConfiguration()
            configuration.retry = RetryPolicy(
                maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(50))
            adjust(&configuration)
            let endpoint = HTTPSOrigin(host: "127.0.0.1", port: home.localPort)
            let dialect = FakeDialect(
                authority: endpoint.authority,
                routes: [
                    "b": HTTPSOrigin(host: "127.0.0.1", port: b.localPort),
                    "c": HTTPSOrigin(host: "127.0.0.1", port: c.localPort),
                ])
            client = ProviderClient(
                name: "routed", endpoint: endpoint, dialect: dialect,
                tlsContext: try TLSContext.client(caPEM: identity.certificatePEM, useSystemRoots: false),
                configuration: configuration, group: group)
        }

        var bOrigin: HTTPSOrigin { HTTPSOrigin(host: "127.0.0.1", port: b.localPort) }
        var cOrigin: HTTPSOrigin { HTTPSOrigin(host: "127.0.0.1", port: c.localPort) }

        func send(_ tokens: [String]) async -> [DeliveryResult] {
            #expect(client.reserve(tokens.count))
            return await client.sendAndWait(FakeDialect.push(tokens: tokens), deadline: .now + .seconds(20))
        }

        func stop() {
            client.shutdown()
            for server in [home, b, c] { server.close() }
            group.shutdown()
        }
    }

    /// `count` 64-character tokens starting with `first`.
    static func tokens(_ first: Character, _ count: Int) -> [String] {
        TestTokens.starting(with: first, count: count)
    }

    @Test("each origin a token names gets a pool of its own; the rest go to the app's endpoint")
    func routes() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        #expect(fixture.client.otherOrigins.isEmpty)
        let tokens = Self.tokens("a", 10) + Self.tokens("b", 20) + Self.tokens("c", 30)
        let results = await fixture.send(tokens)
        #expect(results.map(\.token) == tokens)
        #expect(results.allSatisfy { $0.status == .delivered }, "\(results.filter { $0.status != .delivered })")
        #expect(fixture.home.requests == 10)
        #expect(fixture.b.requests == 20)
        #expect(fixture.c.requests == 30)
        #expect(Set(fixture.client.otherOrigins) == [fixture.bOrigin, fixture.cOrigin])
        #expect(fixture.client.heldRequests == 0)
    }

    @Test("past max_origins a Send is refused before anything is sent; one that raced past it is FAILED")
    func bounded() async throws {
        let fixture = try Fixture { $0.maxOrigins = 1 }
        defer { fixture.stop() }
        let both = Self.tokens("b", 2) + Self.tokens("c", 2)
        let refusal = try #require(fixture.client.originRefusal(tokens: both))
        #expect(refusal.contains("max_origins is 1"), "\(refusal)")
        #expect(fixture.client.originRefusal(tokens: Self.tokens("a", 3) + Self.tokens("b", 3)) == nil)

        #expect(await fixture.send(Self.tokens("b", 3)).allSatisfy { $0.status == .delivered })
        #expect(fixture.client.originRefusal(tokens: Self.tokens("b", 3)) == nil)  // b has its pool
        #expect(fixture.client.originRefusal(tokens: Self.tokens("c", 1)) != nil)

        // Sent without asking first (two Sends racing): c's tokens fail, the others go.
        let results = await fixture.send(Self.tokens("a", 2) + Self.tokens("c", 2))
        #expect(results.prefix(2).allSatisfy { $0.status == .delivered })
        #expect(
            results.suffix(2).allSatisfy {
                $0.status == .failed && $0.reason.hasPrefix("TooManyOrigins: ") && $0.code == .tooManyOrigins
            },
            "\(results)")
        #expect(fixture.c.requests == 0)
        #expect(fixture.client.heldRequests == 0)
    }

    @Test("a pool idle for origin_idle_timeout is closed, and made again on the next token for it")
    func idleClose() async throws {
        // Whether the pool is still there right after the Send depends on how long the machine took
        // to get back to the test (over 3 s with the whole suite on 2 cores): the connections the
        // origin saw opened and closed do not.
        let fixture = try Fixture { $0.originIdleTimeout = .seconds(3) }
        defer { fixture.stop() }
        #expect(await fixture.send(Self.tokens("b", 5)).allSatisfy { $0.status == .delivered })
        #expect(fixture.b.connectionsOpened == 1)
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline,
            !fixture.client.otherOrigins.isEmpty || fixture.b.connectionsClosed == 0
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(fixture.client.otherOrigins.isEmpty)
        #expect(fixture.b.connectionsClosed == 1)
        // The app's own pool is never dropped for idleness.
        #expect(fixture.home.connectionsClosed == 0)

        #expect(await fixture.send(Self.tokens("b", 5)).allSatisfy { $0.status == .delivered })
        #expect(fixture.b.connectionsOpened == 2)
        #expect(fixture.client.otherOrigins == [fixture.bOrigin] || fixture.b.connectionsClosed == 2)
    }
}
