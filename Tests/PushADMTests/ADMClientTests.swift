import PushCore
import PushCredentials
import PushDelivery
import PushMockADM
import PushMockSupport
import PushPosix
import PushTLS
import PushTransport
import Testing

@testable import PushADM

/// The ADM client against `pushgate mock-adm`'s server on loopback: real TLS, HTTP/1.1 (the
/// mock's default, as Amazon's) or HTTP/2 chosen by ALPN, and the Login-with-Amazon
/// client-credentials exchange.
@Suite("ADM client against the mock")
struct ADMClientTests {
    final class Fixture: @unchecked Sendable {
        let group: EventLoopGroup
        let server: MockADMServer
        let client: ADMClient

        init(
            retry: RetryPolicy = RetryPolicy(), http1: Bool = true,
            _ configure: (inout MockADMConfiguration) -> Void = { _ in }
        ) throws {
            var configuration = try MockADMConfiguration.generated()
            configuration.http1 = http1
            configure(&configuration)
            group = try EventLoopGroup(loopCount: 2, namePrefix: "adm-test")
            server = try MockADMServer(configuration: configuration, group: group)
            let tls = try TLSContext.client(
                caPEM: server.certificatePEM!, alpn: HTTPVersionPolicy.auto.alpn, useSystemRoots: false)
            let fetch = try AmazonOAuth.fetch(
                clientID: configuration.credentials.clientID, clientSecret: configuration.credentials.clientSecret,
                tokenURL: server.tokenURL, tlsContext: tls, loop: group.loops[0])
            var settings = ProviderClientConfiguration()
            settings.retry = retry
            settings.httpVersion = .auto
            let endpoint = try #require(HTTPSOrigin(url: server.baseURL))
            let dialect = ADMDialect(authority: endpoint.authority, accessTokens: AccessTokenCache(fetch: fetch))
            client = ProviderClient(
                name: "fire", endpoint: endpoint, dialect: dialect, tlsContext: tls, configuration: settings,
                group: group)
        }

        func send(_ ids: [String]) async -> [DeliveryResult] {
            #expect(client.reserve(ids.count))
            let message = PreparedADMMessage(body: Array(#"{"data":{"k":"v"}}"#.utf8), expiration: nil, tokens: ids)
            return await client.sendAndWait(.adm(message), deadline: .now + .seconds(30))
        }

        deinit {
            client.shutdown()
            server.close()
            group.shutdown()
        }
    }

    static func ids(_ count: Int, prefix: String = "") -> [String] {
        (0..<count).map { "\(prefix)amzn1.adm-registration.v3.Y29tLmV4YW1wbGU\($0)" }
    }

    @Test(
        "many sends reuse one access token and one connection; results carry the request id", arguments: [true, false])
    func tokenReuse(http1: Bool) async throws {
        let fixture = try Fixture(http1: http1)
        #expect(await fixture.send(Self.ids(500)).allSatisfy { $0.status == .delivered && !$0.providerID.isEmpty })
        #expect(await fixture.send(Self.ids(20)).allSatisfy { $0.status == .delivered })
        let stats = fixture.server.stats
        #expect(stats.tokenRequests == 1)
        #expect(stats.delivered == 520)
        // HTTP/1.1: one request at a time on the connection; HTTP/2: many streams at once.
        #expect(http1 ? stats.maxInFlight == 1 : stats.maxInFlight > 1)
        fixture.server.revokeAccessTokens()
        #expect(await fixture.send(Self.ids(30)).allSatisfy { $0.status == .delivered })
        #expect(fixture.server.stats.tokenRequests == 2, "thirty AccessTokenExpired answers, one renewal")
    }

    @Test("a canonical registration id comes back with the result; dead ids are rejected and invalidated")
    func canonicalAndDead() async throws {
        let fixture = try Fixture {
            $0.canonicalPrefix = "old-"
            $0.unregisteredPrefix = "dead-"
            $0.invalidPrefix = "bad-"
        }
        let ids = Self.ids(1) + Self.ids(1, prefix: "old-") + Self.ids(1, prefix: "dead-") + Self.ids(1, prefix: "bad-")
        let results = await fixture.send(ids)
        #expect(results.map(\.status) == [.delivered, .delivered, .rejected, .rejected])
        #expect(results[0].canonicalToken.isEmpty)
        #expect(results[1].canonicalToken == Self.ids(1)[0] + "-canonical")
        #expect(results[2].reason == "Unregistered" && results[2].invalidatesToken)
        #expect(results[3].reason == "InvalidRegistrationId" && results[3].invalidatesToken)
        #expect(results.map(\.code) == [.delivered, .delivered, .rejectedByProvider, .rejectedByProvider])
    }

    @Test("429 MaxRateExceeded waits for Retry-After and is delivered")
    func rateLimited() async throws {
        let fixture = try Fixture(retry: RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(10))) {
            $0.rateLimitEvery = 5
            $0.retryAfterSeconds = 1
        }
        let clock = ContinuousClock()
        let start = clock.now
        let results = await fixture.send(Self.ids(20))
        #expect(results.allSatisfy { $0.status == .delivered })
        #expect(results.contains { $0.attempts == 2 })
        #expect(clock.now - start >= .seconds(1))
        #expect(fixture.server.stats.count(status: 429) >= 1)
    }
}
