import PushAPNs
import PushCore
import PushCredentials
import PushDelivery
import PushMockAPNs
import PushPosix
import PushTLS
import PushTestSupport
import PushTransport
import Synchronization
import Testing

/// The APNs client against the mock APNs server on loopback: real TLS, real HTTP/2 on both ends.
@Suite("APNs client against the mock", .timeLimit(.minutes(1)))
struct APNsClientTests {
    static let team = "TEAM123456"
    static let keyID = "KEY1234567"

    /// A mock that verifies tokens from a fresh key, and a client of it.
    struct Fixture {
        let group: EventLoopGroup
        let mock: MockAPNsServer
        let client: APNsClient
        let tokens: ProviderTokenCache
        let verifier: ES256Verifier

        init(
            mock configure: (inout MockAPNsConfiguration) -> Void = { _ in },
            client adjust: (inout ProviderClientConfiguration) -> Void = { _ in }
        ) throws {
            group = try EventLoopGroup(loopCount: 2, namePrefix: "apns-test")
            let key = try ES256Signer.generateP8()
            verifier = try ES256Verifier(publicKeyPEM: key.publicKeyPEM)
            var mockConfiguration = MockAPNsConfiguration.defaults
            mockConfiguration.verifyTokens = [APNsClientTests.keyID: verifier]
            mockConfiguration.teamID = APNsClientTests.team
            configure(&mockConfiguration)
            mock = try MockAPNsServer(configuration: mockConfiguration, group: group)
            tokens = ProviderTokenCache(
                teamID: APNsClientTests.team, keyID: APNsClientTests.keyID,
                signer: try ES256Signer(p8PEM: key.privateKeyPEM),
                clock: unixSeconds)
            var configuration = ProviderClientConfiguration()
            configuration.retry = RetryPolicy(
                maxAttempts: 5, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(50))
            adjust(&configuration)
            let endpoint = HTTPSOrigin(host: "127.0.0.1", port: mock.localPort)
            client = ProviderClient(
                name: "test", endpoint: endpoint,
                dialect: APNsDialect(credentials: .providerToken(tokens), authority: endpoint.authority),
                tlsContext: try TLSContext.client(caPEM: mock.certificatePEM!), configuration: configuration,
                group: group)
        }

        func send(
            tokens: [String], topic: String = "com.example.app", pushType: PushType = .alert,
            payload: String = #"{"aps":{"alert":"hi"}}"#, deadline: ContinuousClock.Instant? = .now + .seconds(30)
        ) async -> [DeliveryResult] {
            let notification = PreparedNotification(
                payload: Array(payload.utf8), pushType: pushType, topic: topic,
                priority: pushType == .background ? 5 : 10,
                expiration: nil, collapseID: nil, apnsID: nil, tokens: tokens)
            let collector = DeliveryCollector(
                placeholders: tokens.map {
                    DeliveryResult(notificationIndex: 0, token: $0, status: .failed, code: .deadlineExceeded)
                })
            #expect(client.reserve(tokens.count))
            client.send(.apns(notification), notificationIndex: 0, firstSlot: 0, collector: collector)
            return await collector.results(deadline: deadline)
        }

        func stop() {
            client.shutdown()
            mock.close()
            group.shutdown()
        }
    }

    @Test("N notifications over one connection arrive with the right headers and a JWT that verifies")
    func deliversWithHeadersAndJWT() async throws {
        let fixture = try Fixture(mock: { $0.recordRequests = 2000 })
        defer { fixture.stop() }
        let tokens = TestTokens.hex64(count: 2000)
        let results = await fixture.send(tokens: tokens)
        #expect(results.map(\.token) == tokens)
        #expect(results.allSatisfy { $0.status == .delivered && $0.httpStatus == 200 && $0.attempts == 1 })
        #expect(results.allSatisfy { APNsID($0.providerID) != nil })
        let stats = fixture.mock.stats
        #expect(stats.delivered == 2000)
        #expect(stats.connectionsOpened == 1, "one connection carries them all")
        #expect(stats.maxInFlight > 1, "requests are multiplexed once the token was accepted")
        let request = try #require(stats.recentRequests.last)
        #expect(request.header(":method") == "POST")
        #expect(request.header("apns-topic") == "com.example.app")
        #expect(request.header("apns-push-type") == "alert")
        #expect(request.header("apns-priority") == "10")
        #expect(request.payloadString == #"{"aps":{"alert":"hi"}}"#)
        let bearer = try #require(request.header("authorization"))
        #expect(bearer.hasPrefix("bearer "))
        let claims = try #require(APNsProviderToken.verify(String(bearer.dropFirst(7)), verifier: fixture.verifier))
        #expect(claims.keyID == Self.keyID && claims.teamID == Self.team)
        #expect(fixture.tokens.signings == 1, "the JWT is signed once, not per request or per connection")
    }

    @Test("a 410 token comes back REJECTED with unregistered_at; a bad token REJECTED; others DELIVERED")
    func rejections() async throws {
        let dead = TestTokens.hex64(0xdead)
        let bad = TestTokens.hex64(0xbad)
        let fixture = try Fixture(mock: {
            $0.unregisteredTokens = [dead]
            $0.unregisteredTimestamp = 1_700_000_000_123
            $0.badTokens = [bad]
        })
        defer { fixture.stop() }
        let results = await fixture.send(tokens: [TestTokens.hex64(1), dead, bad])
        #expect(results[0].status == .delivered)
        #expect(results[1].status == .rejected)
        #expect(results[1].httpStatus == 410 && results[1].reason == "Unregistered")
        #expect(results[1].unregisteredAt == 1_700_000_000_123)
        #expect(results[2].status == .rejected && results[2].reason == "BadDeviceToken" && results[2].attempts == 1)
    }

    @Test("with 503s and 500s and a GOAWAY mid-run, every token still ends DELIVERED")
    func survivesFaultsAndGoAway() async throws {
        let fixture = try Fixture(
            mock: {
                $0.fail503Share = 0.1
                $0.fail500Share = 0.05
                $0.goAwayAfterStreams = 700
            }, client: { $0.retry.maxAttempts = 10 })
        defer { fixture.stop() }
        let tokens = TestTokens.hex64(count: 3000)
        let results = await fixture.send(tokens: tokens)
        let failed = results.filter { $0.status != .delivered }
        #expect(
            failed.isEmpty,
            "\(failed.count) failed, e.g. \(failed.first.map { "\($0.reason) after \($0.attempts)" } ?? "")")
        let stats = fixture.mock.stats
        #expect(stats.goAwaysSent >= 1)
        #expect(stats.connectionsOpened >= 2, "a new connection after each GOAWAY")
        #expect(stats.count(status: 503) > 0)
        #expect(results.contains { $0.attempts > 1 }, "503s were retried")
        #expect(Set(stats.deliveredPerToken.keys).count == 3000)
    }

    @Test("a dropped connection is replaced and its streams resent")
    func survivesDroppedConnection() async throws {
        // The mock drops each connection when its 121st stream arrives; answers it had not yet written
        // are lost with it, as on a real network. 50 streams at a time lets most get through.
        let fixture = try Fixture(
            mock: { $0.dropConnectionAfterStreams = 120 },
            client: {
                $0.maxConcurrentStreams = 50
                $0.retry.maxAttempts = 10
            })
        defer { fixture.stop() }
        let results = await fixture.send(tokens: TestTokens.hex64(count: 1000))
        let failed = results.filter { $0.status != .delivered }
        #expect(
            failed.isEmpty,
            "\(failed.count) failed, e.g. \(failed.first.map { "\($0.reason) after \($0.attempts)" } ?? "")")
        #expect(results.contains { $0.attempts > 1 }, "streams lost with a connection were sent again")
        #expect(fixture.mock.stats.connectionsOpened >= 2)
    }

    @Test("a push for another API is FAILED WrongPlatform at once, coded wrongPlatform")
    func wrongPlatform() async throws {
        let fixture = try Fixture()
        defer { fixture.stop() }
        #expect(fixture.client.reserve(1))
        let results = await fixture.client.sendAndWait(
            .apnsChannel(APNsChannelRequest(.list, bundleID: "com.x")), deadline: .now + .seconds(10))
        #expect(results.map(\.status) == [.failed])
        #expect(results[0].reason == "WrongPlatform: app test is not a APNs app")
        #expect(results[0].code == .wrongPlatform)
        #expect(fixture.client.heldRequests == 0, "room is given back")
    }
}
