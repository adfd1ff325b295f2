import PushAPNs
import PushCore
import PushDelivery
import PushMockAPNs
import PushPosix
import PushTLS
import PushTestSupport
import PushTransport
import Testing

@Suite("APNs certificate auth", .timeLimit(.minutes(1)))
struct APNsCertificateAuthTests {
    @Test("certificate auth: the app's certificate is the TLS identity and no authorization header is sent")
    func certificateAuth() async throws {
        let group = try EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        var mockConfiguration = MockAPNsConfiguration.defaults
        mockConfiguration.recordRequests = 10
        let mock = try MockAPNsServer(configuration: mockConfiguration, group: group)
        defer { mock.close() }
        let identity = try SelfSignedCertificate.generate(
            commonName: "Apple Push Services: com.example", subjectAltNames: [])
        let tls = try TLSContext.client(
            caPEM: mock.certificatePEM!, certificateChainPEM: identity.certificatePEM,
            privateKeyPEM: identity.privateKeyPEM)
        let endpoint = HTTPSOrigin(host: "127.0.0.1", port: mock.localPort)
        let client = ProviderClient(
            name: "cert", endpoint: endpoint,
            dialect: APNsDialect(credentials: .certificate, authority: endpoint.authority),
            tlsContext: tls, configuration: ProviderClientConfiguration(), group: group)
        defer { client.shutdown() }
        let results = await send(client, tokens: [TestTokens.hex64(7)])
        #expect(results[0].status == .delivered)
        let request = try #require(mock.stats.recentRequests.last)
        #expect(request.header("authorization") == nil)
        #expect(request.header("apns-topic") == "com.example")
    }

    func send(_ client: APNsClient, tokens: [String]) async -> [DeliveryResult] {
        let collector = DeliveryCollector(
            placeholders: tokens.map {
                DeliveryResult(notificationIndex: 0, token: $0, status: .failed, code: .deadlineExceeded)
            })
        _ = client.reserve(tokens.count)
        client.send(
            .apns(
                PreparedNotification(
                    payload: Array(#"{"aps":{"alert":"x"}}"#.utf8), pushType: .alert, topic: "com.example",
                    priority: 10,
                    expiration: nil, collapseID: nil, apnsID: nil, tokens: tokens)),
            notificationIndex: 0, firstSlot: 0, collector: collector)
        return await collector.results(deadline: .now + .seconds(20))
    }
}
