import PushCore
import PushMockSupport
public import PushPosix
import PushTLS
import PushTransport
import Synchronization

/// An APNs look-alike over real TLS 1.2+/1.3 and HTTP/2 (ALPN h2), for tests and load tests.
///
/// It answers `POST /3/device/<token>` like APNs (docs/providers.md A.5, A.6 and E): a 200 is one
/// HEADERS frame with END_STREAM carrying `apns-id`; an error is `:status`, `content-type:
/// application/json`, `apns-id` and one DATA frame `{"reason":"…"}` (410 adds `"timestamp"`).
/// Requests are checked in APNs's order (method, path, duplicate headers, provider token, topic,
/// push type, topic suffix, priority, expiration, collapse id, apns-id, body), then faults are
/// injected and the token lists applied (see ``MockAPNsConfiguration``).
///
/// Connections are spread over every loop of the group; each stays on its loop. Output is flushed
/// once per loop turn per connection, and statistics are merged once per turn per connection.
public final class MockAPNsServer: Sendable {
    public let configuration: MockAPNsConfiguration
    /// The certificate clients should trust (PEM): the generated one, or the chain given as PEM;
    /// nil when the identity came from files.
    public let certificatePEM: String?
    private let shared: MockAPNsShared
    private let listener: TCPServer
    /// The channel management API's listener, when configured.
    private let channelListener: MockHTTP2Server?

    /// Binds the listener (TLS + h2) and starts accepting on `group`'s loops.
    public init(configuration: MockAPNsConfiguration = .defaults, group: EventLoopGroup) throws {
        var configuration = configuration
        if case .generate(let names) = configuration.identity, configuration.channelsListen != nil {
            // One certificate for both listeners, so the CA clients are given trusts both.
            let identity = try SelfSignedCertificate.generate(
                commonName: "Pushgate mock APNs", subjectAltNames: names, validDays: 365)
            configuration.identity = .pem(certificateChain: identity.certificatePEM, privateKey: identity.privateKeyPEM)
        }
        self.configuration = configuration
        let (tls, certificatePEM) = try configuration.identity.makeServerContext(
            commonName: "Pushgate mock APNs", clientCAPEM: configuration.clientCAPEM)
        self.certificatePEM = certificatePEM
        let shared = MockAPNsShared(configuration: configuration, tls: tls)
        self.shared = shared
        listener = try HTTPListener.listen(host: configuration.host, port: configuration.port, group: group) {
            connection in
            try MockAPNsConnection.serve(connection, id: shared.connections.nextID(), shared: shared)
        }
        if let (host, port) = configuration.channelsListen {
            var settings = MockServerSettings()
            settings.host = host
            settings.port = port
            settings.identity = configuration.identity
            settings.maxBodyBytes = 4096
            do {
                channelListener = try MockHTTP2Server(
                    settings: settings, commonName: "Pushgate mock APNs channels",
                    handler: MockAPNsChannelAPI(shared: shared), events: MockChannelListenerEvents(), group: group)
            } catch {
                listener.close()
                throw error
            }
        } else {
            channelListener = nil
        }
    }

    /// The channel management port actually bound; nil when it is not served.
    public var channelsPort: Int? { channelListener?.localPort }

    /// The port actually bound (useful with port 0).
    public var localPort: Int { listener.localPort }

    /// Stops accepting, and tells every open connection to finish: GOAWAY with
    /// `{"reason":"Shutdown"}`, answer what is in flight, then close. Asynchronous (each
    /// connection acts on its own loop).
    public func close() {
        listener.close()
        channelListener?.close()
        for connection in shared.connections.open {
            connection.loop.execute { connection.shutDownGracefully() }
        }
    }

    /// A consistent snapshot of the counters and the recorded requests.
    public var stats: MockAPNsStats {
        var stats = shared.stats.snapshot()
        stats.channels = shared.channels.count
        return stats
    }

    /// Zeroes the counters and forgets the recorded requests (open connections stay counted).
    public func resetStats() { shared.stats.reset() }
}

/// What every connection of one server shares: configuration, TLS context, precomputed lookups,
/// the fault-draw counter and the statistics.
final class MockAPNsShared: Sendable {
    let configuration: MockAPNsConfiguration
    let tls: TLSContext
    let stats: StatsRecorder

    let injectsFaults: Bool
    let fail500Threshold: Double
    let fail503Threshold: Double
    let fail429Threshold: Double
    let expiredTokenThreshold: Double
    let hasTokenRules: Bool
    let rejections: [[UInt8]: APNsReason]
    let badTokens: Set<[UInt8]>
    let unregisteredTokens: Set<[UInt8]>
    let tracksTokens: Bool
    let recordsRequests: Bool
    let channels: MockChannelTable

    private let faultDraws = Atomic<UInt64>(0)
    let connections = ConnectionRegistry<MockAPNsConnection>()

    init(configuration: MockAPNsConfiguration, tls: TLSContext) {
        self.configuration = configuration
        self.tls = tls
        stats = StatsRecorder(
            recordLimit: configuration.recordRequests, tokenLimit: configuration.maxTrackedTokens,
            connectionLimit: configuration.maxTrackedConnections)
        func share(_ value: Double) -> Double { value.isNaN ? 0 : min(1, max(0, value)) }
        fail500Threshold = share(configuration.fail500Share)
        fail503Threshold = fail500Threshold + share(configuration.fail503Share)
        fail429Threshold = fail503Threshold + share(configuration.fail429Share)
        expiredTokenThreshold = fail429Threshold + share(configuration.expiredTokenShare)
        injectsFaults = expiredTokenThreshold > 0
        func key(_ token: String) -> [UInt8] { lowercasedASCII(Array(token.utf8)) }
        rejections = Dictionary(
            configuration.rejections.map { (key($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
        badTokens = Set(configuration.badTokens.map(key))
        unregisteredTokens = Set(configuration.unregisteredTokens.map(key))
        hasTokenRules = !rejections.isEmpty || !badTokens.isEmpty || !unregisteredTokens.isEmpty
        tracksTokens = configuration.maxTrackedTokens > 0
        recordsRequests = configuration.recordRequests > 0
        channels = MockChannelTable(seed: configuration.channelSeed)
    }

    /// The next draw of the shared fault sequence, in [0, 1). Lock-free: one atomic increment.
    func nextFaultDraw() -> Double {
        let index = faultDraws.wrappingAdd(1, ordering: .relaxed).oldValue
        return SplitMix64.unitDouble(seed: configuration.faultSeed, index: index)
    }
}
