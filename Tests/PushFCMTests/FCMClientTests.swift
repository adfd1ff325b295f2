import PushCore
import PushCredentials
import PushDelivery
import PushMockFCM
import PushMockSupport
import PushPosix
import PushSync
import PushTLS
import PushTransport
import Testing

@testable import PushFCM

/// The FCM client against `pushgate mock-fcm`'s server on loopback: real TLS, HTTP/2 and OAuth2.
@Suite("FCM client against the mock")
struct FCMClientTests {
    static let key = try! RSAKeyPair.generate()

    final class Fixture: @unchecked Sendable {
        let group: EventLoopGroup
        let server: MockFCMServer
        let client: FCMClient
        let accessTokens: AccessTokenCache

        /// - Parameter clock: the access-token cache's clock (Unix seconds).
        init(
            retry: RetryPolicy = RetryPolicy(), _ configure: (inout MockFCMConfiguration) -> Void = { _ in },
            clock: @escaping @Sendable () -> Int64 = unixSeconds
        ) throws {
            var configuration = MockFCMConfiguration(
                projectID: "fcm-test", clientEmail: "pushgate@fcm-test.iam.gserviceaccount.com",
                assertionVerifier: try RSAVerifier(scheme: .rs256, publicKeyPEM: FCMClientTests.key.publicKeyPEM))
            configure(&configuration)
            group = try EventLoopGroup(loopCount: 2, namePrefix: "fcm-test")
            server = try MockFCMServer(configuration: configuration, group: group)
            let account = try server.serviceAccount(privateKeyPEM: FCMClientTests.key.privateKeyPEM)
            let tls = try TLSContext.client(caPEM: server.certificatePEM!, useSystemRoots: false)
            accessTokens = AccessTokenCache(
                clock: clock,
                fetch: try GoogleOAuth.fetch(
                    account: account, signer: try account.signer(), tokenURL: account.tokenURI, tlsContext: tls,
                    loop: group.loops[0]))
            var settings = ProviderClientConfiguration()
            settings.retry = retry
            let endpoint = HTTPSOrigin(host: "127.0.0.1", port: server.localPort)
            let dialect = FCMDialect(
                projectID: account.projectID, authority: endpoint.authority, accessTokens: accessTokens)
            client = ProviderClient(
                name: "android", endpoint: endpoint, dialect: dialect, tlsContext: tls, configuration: settings,
                group: group)
        }

        func send(_ tokens: [String], deadline: Duration = .seconds(30)) async -> [DeliveryResult] {
            let message = PreparedFCMMessage(
                bodyPrefix: Array(#"{"message":{"token":""#.utf8), bodySuffix: Array(#"","data":{"k":"v"}}}"#.utf8),
                expiration: nil, tokens: tokens)
            #expect(client.reserve(tokens.count))
            return await client.sendAndWait(.fcm(message), deadline: .now + deadline)
        }

        deinit {
            client.shutdown()
            server.close()
            group.shutdown()
        }
    }

    static func tokens(_ count: Int, prefix: String = "tok") -> [String] {
        (0..<count).map { "\(prefix)-\($0):APA91b" + String(repeating: "x", count: 100) }
    }

    @Test("N sends over one connection with one access token, multiplexed")
    func manySends() async throws {
        let fixture = try Fixture()
        let tokens = Self.tokens(2000)
        let results = await fixture.send(tokens)
        #expect(results.allSatisfy { $0.status == .delivered })
        #expect(results.allSatisfy { $0.providerID.hasPrefix("projects/fcm-test/messages/") })
        #expect(results.map(\.token) == tokens)
        let stats = fixture.server.stats
        #expect(stats.tokenRequests == 1)
        // The token exchange is a short connection of its own; every send shares the other one.
        #expect(stats.connectionsOpened == 2)
        #expect(stats.delivered == 2000)
        #expect(stats.maxInFlight > 1, "requests share the connection's streams")
        #expect(stats.maxInFlight <= 100, "never above the server's MAX_CONCURRENT_STREAMS")
        #expect(fixture.accessTokens.fetches == 1)
    }

    @Test("an expired access token is renewed once; a revoked one (401) too")
    func renewal() async throws {
        // The cache's clock is the test's: with a real one and a token of a few seconds, a loaded
        // machine renewed it during the first send as well (its renewal starts at half its life).
        let now = Locked<Int64>(1_700_000_000)
        let fixture = try Fixture(clock: { now.withLock { $0 } })
        #expect(await fixture.send(Self.tokens(10)).allSatisfy { $0.status == .delivered })
        #expect(fixture.server.stats.tokenRequests == 1)
        now.withLock { $0 += 3_600 }  // the mock's tokens live an hour: this one's time ran out
        #expect(await fixture.send(Self.tokens(50)).allSatisfy { $0.status == .delivered })
        #expect(fixture.server.stats.tokenRequests == 2, "renewed before use when its time ran out")
        fixture.server.revokeAccessTokens()
        let results = await fixture.send(Self.tokens(50))
        #expect(results.allSatisfy { $0.status == .delivered })
        #expect(fixture.server.stats.tokenRequests == 3, "fifty 401s, one renewal")
        #expect(fixture.server.stats.count(status: 401) >= 1)
    }

    @Test("503 with Retry-After is retried after it and delivered")
    func retryAfter() async throws {
        let fixture = try Fixture(retry: RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(10))) {
            $0.unavailableEvery = 4
            $0.retryAfterSeconds = 1
        }
        let clock = ContinuousClock()
        let start = clock.now
        let results = await fixture.send(Self.tokens(20))
        #expect(results.allSatisfy { $0.status == .delivered })
        #expect(results.contains { $0.attempts == 2 }, "some were answered 503 first")
        #expect(clock.now - start >= .seconds(1), "the retry waited for Retry-After, not the 10 ms backoff")
        #expect(fixture.server.stats.count(status: 503) >= 1)
    }

    @Test("UNREGISTERED and SENDER_ID_MISMATCH are rejections that invalidate the token")
    func deadTokens() async throws {
        let fixture = try Fixture {
            $0.unregisteredPrefix = "dead-"
            $0.mismatchedSenderPrefix = "other-"
        }
        let tokens = Self.tokens(2) + Self.tokens(1, prefix: "dead") + Self.tokens(1, prefix: "other")
        let results = await fixture.send(tokens)
        #expect(results.map(\.status) == [.delivered, .delivered, .rejected, .rejected])
        #expect(results[2].reason == "UNREGISTERED")
        #expect(results[2].httpStatus == 404)
        #expect(results[3].reason == "SENDER_ID_MISMATCH")
        #expect(results[2].invalidatesToken && results[3].invalidatesToken)
        #expect(!results[0].invalidatesToken)
    }

    @Test("a token endpoint that refuses the assertion fails the sends with its reason")
    func refusedAssertion() async throws {
        let fixture = try Fixture {
            $0.assertionVerifier = try! RSAVerifier(
                scheme: .rs256, publicKeyPEM: try! RSAKeyPair.generate().publicKeyPEM)
        }
        let results = await fixture.send(Self.tokens(3))
        #expect(results.allSatisfy { $0.status == .failed })
        #expect(results[0].reason.hasPrefix("OAuthTokenError: "))
        #expect(results.allSatisfy { $0.code == .noCredential })
        #expect(results[0].reason.contains("invalid_grant"))
        #expect(fixture.server.stats.sendRequests == 0)
    }
}
