import PushAPNs
import PushCore
import PushCredentials
import PushDelivery
import PushMockAPNs
import PushPosix
import PushSync
import PushTLS
import PushTransport
import Synchronization
import Testing

/// A TCP relay between the client and the mock whose current connections can go silent (drop
/// every byte, close nothing): a connection that died somewhere on the network, which only PING can
/// find out. Connections made after `freeze()` pass normally.
final class FreezableRelay: Sendable {
    final class Flag: Sendable {
        let frozen = Atomic<Bool>(false)
    }

    final class Flags: Sendable {
        let list = Locked<[Flag]>([])
    }

    let listener: TCPServer
    private let flags = Flags()

    init(group: EventLoopGroup, targetPort: Int) throws {
        let flags = self.flags
        listener = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { inbound in
            let flag = Flag()
            flags.list.withLock { $0.append(flag) }
            let toClient = RelaySide(peer: inbound, flag: flag)
            let toServer = RelaySide(peer: nil, flag: flag)
            Connection.connect(host: "127.0.0.1", port: targetPort, on: inbound.loop, handler: toClient) { result in
                if case .success(let outbound) = result {
                    toServer.attach(outbound)
                } else {
                    inbound.close(flushFirst: false)
                }
            }
            return toServer
        }
    }

    var port: Int { listener.localPort }

    func freeze() {
        flags.list.withLock { flags in
            for flag in flags { flag.frozen.store(true, ordering: .relaxed) }
        }
    }
}

/// Forwards what its connection receives to `peer` (buffering until the peer is connected).
private final class RelaySide: ConnectionHandler, @unchecked Sendable {
    private var peer: Connection?
    private var pending: [UInt8] = []
    private let flag: FreezableRelay.Flag

    init(peer: Connection?, flag: FreezableRelay.Flag) {
        self.peer = peer
        self.flag = flag
    }

    func attach(_ peer: Connection) {
        self.peer = peer
        if !pending.isEmpty { peer.write(pending) }
        pending = []
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        guard !flag.frozen.load(ordering: .relaxed) else { return }
        if let peer { peer.write(bytes) } else { pending.append(contentsOf: bytes) }
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        peer?.close(flushFirst: true)
    }
}

@Suite("APNs connection liveness and certificate auth", .timeLimit(.minutes(1)))
struct APNsConnectionLivenessTests {
    @Test("a connection that goes silent is found dead by PING and replaced; its streams are resent")
    func deadConnectionIsReplaced() async throws {
        let group = try EventLoopGroup(loopCount: 2)
        defer { group.shutdown() }
        var mockConfiguration = MockAPNsConfiguration.defaults
        mockConfiguration.responseDelay = .milliseconds(300)
        let mock = try MockAPNsServer(configuration: mockConfiguration, group: group)
        defer { mock.close() }
        let relay = try FreezableRelay(group: group, targetPort: mock.localPort)
        var configuration = ProviderClientConfiguration()
        configuration.pingInterval = .milliseconds(200)
        configuration.pingTimeout = .milliseconds(200)
        configuration.retry = RetryPolicy(
            maxAttempts: 3, initialBackoff: .milliseconds(10), maxBackoff: .milliseconds(20))
        let key = try ES256Signer.generateP8()
        let endpoint = HTTPSOrigin(host: "127.0.0.1", port: relay.port)
        let tokens = ProviderTokenCache(
            teamID: "T", keyID: "K", signer: try ES256Signer(p8PEM: key.privateKeyPEM), clock: unixSeconds)
        let client = ProviderClient(
            name: "t", endpoint: endpoint,
            dialect: APNsDialect(credentials: .providerToken(tokens), authority: endpoint.authority),
            tlsContext: try TLSContext.client(caPEM: mock.certificatePEM!), configuration: configuration, group: group)
        defer { client.shutdown() }

        // Warm up: one delivery over the relay.
        let first = await send(client, tokens: [APNsClientTests.hex64(1)])
        #expect(first[0].status == .delivered)
        let connectionsBefore = mock.stats.connectionsOpened

        // The network dies under a request in flight: PING finds out, the connection is replaced, and
        // the request goes out again on the new one.
        let sending = Task { await send(client, tokens: [APNsClientTests.hex64(2)]) }
        try await Task.sleep(for: .milliseconds(100))
        relay.freeze()
        let results = await sending.value
        #expect(results[0].status == .delivered, "\(results[0].reason)")
        #expect(results[0].attempts == 2)
        #expect(mock.stats.connectionsOpened == connectionsBefore + 1)
    }

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
        let results = await send(client, tokens: [APNsClientTests.hex64(7)])
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
