import PushAPNs
import PushCore
import PushCredentials
import PushMockAPNs
import PushMockSupport
import PushPosix
import PushTLS
import PushTransport
import Testing

@testable import PushDelivery

/// Pools per origin, on real sockets: a dialect whose tokens name their origin (as Web Push
/// subscriptions name their push service) gets a pool per origin, bounded and closed when idle.
@Suite("Provider pools per origin", .timeLimit(.minutes(1)))
struct OriginPoolTests {
    /// APNs, except that a token starting with `b` or `c` goes to another mock.
    final class RoutingDialect: ProviderDialect {
        let inner: APNsDialect
        let routes: [Character: HTTPSOrigin]
        init(inner: APNsDialect, routes: [Character: HTTPSOrigin]) {
            self.inner = inner
            self.routes = routes
        }
        var providerName: String { "Routing" }
        var idHeader: [UInt8]? { inner.idHeader }
        var routesByToken: Bool { true }
        func origin(ofToken token: String) -> HTTPSOrigin? { token.first.flatMap { routes[$0] } }
        func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> APNsJob? {
            inner.makeJob(for: push, notificationIndex: notificationIndex, collector: collector)
        }
        func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization {
            inner.authorization(for: waiter)
        }
        func submit(
            _ request: ProviderRequest, job: APNsJob, authorization: [UInt8]?, on wire: ProviderWire,
            scratch: inout [UInt8]
        ) -> Result<Int32, ProviderWireError> {
            inner.submit(request, job: job, authorization: authorization, on: wire, scratch: &scratch)
        }
        func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
            inner.outcome(of: response, token: token, now: now)
        }
        func authorizationRejected(generation: Int64) { inner.authorizationRejected(generation: generation) }
        var credentialIssuedAt: Int64? { inner.credentialIssuedAt }
    }

    /// Three mocks with one certificate (home, b, c) and a routing client of them.
    struct Fixture {
        let group: EventLoopGroup
        let home: MockAPNsServer
        let b: MockAPNsServer
        let c: MockAPNsServer
        let client: ProviderClient<RoutingDialect>

        init(_ adjust: (inout ProviderClientConfiguration) -> Void = { _ in }) throws {
            group = try EventLoopGroup(loopCount: 2, namePrefix: "origin-test")
            let identity = try SelfSignedCertificate.generate(commonName: "mock", subjectAltNames: ["127.0.0.1"])
            var mock = MockAPNsConfiguration.defaults
            mock.identity = .pem(certificateChain: identity.certificatePEM, privateKey: identity.privateKeyPEM)
            home = try MockAPNsServer(configuration: mock, group: group)
            b = try MockAPNsServer(configuration: mock, group: group)
            c = try MockAPNsServer(configuration: mock, group: group)
            var configuration = ProviderClientConfiguration()
            configuration.retry = RetryPolicy(
                maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(50))
            adjust(&configuration)
            let endpoint = HTTPSOrigin(host: "127.0.0.1", port: home.localPort)
            let dialect = RoutingDialect(
                inner: APNsDialect(credentials: .certificate, authority: endpoint.authority),
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
            let notification = PreparedNotification(
                payload: Array(#"{"aps":{"alert":"hi"}}"#.utf8), pushType: .alert, topic: "com.example.app",
                priority: 10,
                expiration: nil, collapseID: nil, apnsID: nil, tokens: tokens)
            #expect(client.reserve(tokens.count))
            return await client.sendAndWait(.apns(notification), deadline: .now + .seconds(20))
        }

        func stop() {
            client.shutdown()
            for mock in [home, b, c] { mock.close() }
            group.shutdown()
        }
    }

    /// `count` 64-hex-digit tokens starting with `first`.
    static func tokens(_ first: Character, _ count: Int) -> [String] {
        (0..<count).map { index in
            let hex = String(index, radix: 16)
            return String(first) + String(repeating: "0", count: 63 - hex.count) + hex
        }
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
        #expect(fixture.home.stats.requests == 10)
        #expect(fixture.b.stats.requests == 20)
        #expect(fixture.c.stats.requests == 30)
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
        #expect(fixture.c.stats.requests == 0)
        #expect(fixture.client.heldRequests == 0)
    }

    @Test("a pool idle for origin_idle_timeout is closed, and made again on the next token for it")
    func idleClose() async throws {
        // Long enough that a loaded machine still finds the pool right after the Send.
        let fixture = try Fixture { $0.originIdleTimeout = .seconds(1) }
        defer { fixture.stop() }
        #expect(await fixture.send(Self.tokens("b", 5)).allSatisfy { $0.status == .delivered })
        #expect(fixture.client.otherOrigins == [fixture.bOrigin])
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline,
            !fixture.client.otherOrigins.isEmpty || fixture.b.stats.connectionsClosed == 0
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(fixture.client.otherOrigins.isEmpty)
        #expect(fixture.b.stats.connectionsClosed == 1)
        // The app's own pool is never dropped for idleness.
        #expect(fixture.home.stats.connectionsClosed == 0)

        #expect(await fixture.send(Self.tokens("b", 5)).allSatisfy { $0.status == .delivered })
        #expect(fixture.client.otherOrigins == [fixture.bOrigin])
        #expect(fixture.b.stats.connectionsOpened == 2)
    }
}
