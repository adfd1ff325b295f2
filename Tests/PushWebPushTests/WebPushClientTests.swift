import PushCore
import PushCredentials
import PushDelivery
import PushMetrics
import PushMockSupport
import PushMockWebPush
import PushPosix
import PushTLS
import PushTransport
import Testing

@testable import PushWebPush

/// The Web Push client (the engine with the WebPush dialect) against `pushgate mock-webpush`'s
/// server on loopback: real TLS, HTTP/2 or HTTP/1.1 by ALPN, the mock decrypting every message
/// and checking every VAPID token.
@Suite("Web Push client against the mock")
struct WebPushClientTests {
    final class Fixture: @unchecked Sendable {
        let group: EventLoopGroup
        let server: MockWebPushServer
        let client: WebPushClient
        let vapid: VAPIDTokenCache
        var host: String { "localhost:\(server.localPort)" }

        /// `pushgate_provider_protections_total{event="private_address_refused"}`'s series.
        let refusals = MetricsRegistry().counter("refusals", help: "").labels()

        init(http1Only: Bool = false, allowed: [String]? = nil, admission: AddressAdmission = .any) throws {
            var configuration = MockWebPushConfiguration(keySeed: [UInt8](repeating: 7, count: 32))
            configuration.gonePrefix = "gone-"
            if http1Only {
                configuration.offersBothVersions = false
                configuration.http1 = true
            }
            group = try EventLoopGroup(loopCount: 2, namePrefix: "webpush-test")
            server = try MockWebPushServer(configuration: configuration, group: group)
            let tls = try TLSContext.client(
                caPEM: server.certificatePEM!, alpn: HTTPVersionPolicy.auto.alpn, useSystemRoots: false)
            vapid = try VAPIDTokenCache(
                signer: ES256Signer(p8PEM: try ES256Signer.generateP8().privateKeyPEM),
                subject: "mailto:ops@example.com", clock: unixSeconds)
            var settings = ProviderClientConfiguration()
            settings.httpVersion = .auto
            settings.admission = admission
            let hosts = try WebPushHostPolicy(
                allowed ?? ["localhost:\(server.localPort)", "127.0.0.1:\(server.localPort)"])
            client = ProviderClient(
                name: "web", endpoint: .webPushHome, dialect: WebPushDialect(vapid: vapid, hosts: hosts),
                tlsContext: tls, configuration: settings, group: group,
                metrics: ProviderMetrics(protections: [.privateAddressRefused: refusals]))
        }

        func subscriptions(_ count: Int, prefix: String) throws -> [MockWebPushSubscription] {
            try server.newSubscriptions(count: count, prefix: prefix, host: host)
        }

        func send(_ tokens: [String], plaintext: String = #"{"title":"t"}"#) async -> [DeliveryResult] {
            #expect(client.reserve(tokens.count))
            let message = PreparedWebPushMessage(
                plaintext: Array(plaintext.utf8), ttl: 60, urgency: "low", topic: "t1", expiration: nil,
                tokens: tokens)
            return await client.sendAndWait(.webpush(message), deadline: .now + .seconds(30))
        }

        deinit {
            client.shutdown()
            server.close()
            group.shutdown()
        }
    }

    static func token(_ subscription: MockWebPushSubscription) -> String {
        String(decoding: subscription.browserJSON, as: UTF8.self)
    }

    @Test("HTTP/2 and HTTP/1.1: delivered with the Location, decrypted by the mock, one VAPID token; 410 invalidates")
    func deliversOnBothVersions() async throws {
        for http1Only in [false, true] {
            let fixture = try Fixture(http1Only: http1Only)
            let ok = try fixture.subscriptions(20, prefix: "ok-")
            let gone = try fixture.subscriptions(3, prefix: "gone-")
            let results = await fixture.send((ok + gone).map(Self.token))
            #expect(
                results.prefix(20).allSatisfy {
                    $0.status == .delivered && $0.httpStatus == 201 && $0.providerID.contains("/m/")
                })
            #expect(
                results.suffix(3).allSatisfy { $0.status == .rejected && $0.invalidatesToken && $0.httpStatus == 410 })
            let stats = fixture.server.stats
            #expect(stats.decrypted == 20)
            #expect(
                stats.recentMessages.allSatisfy {
                    $0.plaintextString == #"{"title":"t"}"# && $0.urgency == "low" && $0.topic == "t1" && $0.ttl == 60
                })
            #expect(stats.vapidTokensByAudience == ["https://\(fixture.host)": 1])
            #expect(fixture.vapid.signings == 1)
        }
    }

    @Test("a token that names no allowed push service fails at once, and nothing connects for it")
    func unroutableTokenFailsAtOnce() async throws {
        let fixture = try Fixture()
        let ok = try fixture.subscriptions(2, prefix: "ok-")
        let elsewhere = try fixture.server.subscription(id: "x", host: "localhost:1")
        let results = await fixture.send([
            Self.token(ok[0]), "{not a subscription", Self.token(elsewhere), Self.token(ok[1]),
        ])
        #expect(results.map(\.status) == [.delivered, .failed, .failed, .delivered])
        #expect(results[1].reason.hasPrefix("InvalidToken: app web has no origin"))
        #expect(results[1].code == .unroutableToken)
        #expect(fixture.client.otherOrigins == [HTTPSOrigin(host: "localhost", port: fixture.server.localPort)])
        #expect(fixture.client.openConnections == 1)
    }

    @Test("globalOnly: a push service on loopback is REJECTED, named and counted, and never reached")
    func loopbackPushServiceRefused() async throws {
        let fixture = try Fixture(admission: .globalOnly)
        let port = fixture.server.localPort
        let byName = try fixture.subscriptions(2, prefix: "ok-")
        let byAddress = try fixture.server.subscription(id: "ip", host: "127.0.0.1:\(port)")
        let results = await fixture.send(byName.map(Self.token) + [Self.token(byAddress)])
        #expect(results.map(\.status) == [.rejected, .rejected, .rejected])
        for result in results.prefix(2) {
            #expect(
                result.reason == "the push service host localhost resolved to 127.0.0.1, a loopback address "
                    + "(set allow_private_addresses to allow)"
                    || result.reason == "the push service host localhost resolved to ::1, a loopback address "
                        + "(set allow_private_addresses to allow)",
                "\(result.reason)")
        }
        #expect(
            results[2].reason
                == "the push service host 127.0.0.1 is a loopback address (set allow_private_addresses to allow)")
        #expect(results.allSatisfy { !$0.invalidatesToken && $0.httpStatus == 0 })
        #expect(fixture.refusals.value == 3)
        #expect(fixture.server.stats.counters.connectionsOpened == 0)
        #expect(fixture.server.stats.pushRequests == 0)
    }
}
