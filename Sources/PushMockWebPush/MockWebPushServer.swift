import PushCore
import PushMockSupport
public import PushPosix
import PushTLS
import Synchronization

/// A Web Push service look-alike (RFC 8030 delivery, RFC 8291 `aes128gcm` messages, RFC 8292
/// VAPID) over real TLS with HTTP/2 and HTTP/1.1 chosen per connection by ALPN, for tests and
/// load tests (docs/providers.md F.10).
///
/// Subscriptions are derived, not stored: any id of the base64url alphabet (1–128 characters)
/// names one, with keys derived from the configuration's seed (``subscription(id:host:)``).
/// One listener serves:
/// - `POST /wpush/v2/<id>`: a push, checked as autopush checks it (VAPID, TTL, encryption
///   headers, Topic, size), and then decrypted with the subscription's keys (what no real push
///   service can do); `201 Created` with `Location: https://<authority>/m/<message id>` and the
///   `TTL`, or an error in autopush's JSON shape.
/// - `POST /_mock/subscriptions` (`{"count":N,"prefix":"…","host":"…"}`, all optional): new
///   subscriptions as a JSON array of `PushSubscription.toJSON()` objects with `private_key`.
///
/// Connections are spread over every loop of the group; each stays on its loop.
public final class MockWebPushServer: Sendable {
    public let configuration: MockWebPushConfiguration
    let shared: MockWebPushShared
    private let listener: MockHTTP2Server

    /// Binds the listener and starts accepting on `group`'s loops.
    public init(configuration: MockWebPushConfiguration, group: EventLoopGroup) throws {
        self.configuration = configuration
        let shared = MockWebPushShared(configuration: configuration)
        self.shared = shared
        listener = try MockHTTP2Server(
            settings: configuration.server, commonName: "Pushgate mock Web Push", handler: shared,
            events: shared.stats, group: group)
    }

    /// The certificate clients should trust (PEM): the generated one, or the chain given as PEM;
    /// nil when the identity came from files.
    public var certificatePEM: String? { listener.certificatePEM }

    /// The port actually bound (useful with port 0).
    public var localPort: Int { listener.localPort }

    /// `https://<host>:<port>` as clients on this machine address it (127.0.0.1 when listening on
    /// a wildcard address).
    public var baseURL: String { listener.baseURL }

    /// The subscription `id` names, its endpoint's authority `host` (`localhost:8446`; default
    /// ``baseURL``'s). Throws ``InvalidSubscriptionID`` for an id outside the alphabet or too long.
    public func subscription(id: String, host: String? = nil) throws -> MockWebPushSubscription {
        guard SubscriptionID.isValid(id) else { throw InvalidSubscriptionID(id: id) }
        let authority = host ?? String(baseURL.dropFirst("https://".count))
        return MockWebPushSubscription(id: id, authority: authority, keys: try shared.keys.keys(for: id))
    }

    /// `count` new subscriptions (ids `<prefix>s<n>`, n counting from 1 over the server's life,
    /// the same on every run), as `POST /_mock/subscriptions` and `--print-subscriptions` hand
    /// them out.
    public func newSubscriptions(count: Int, prefix: String = "", host: String? = nil) throws
        -> [MockWebPushSubscription]
    {
        try shared.newIDs(count: count, prefix: prefix).map { try subscription(id: $0, host: host) }
    }

    /// Stops accepting and tells every open connection to finish (GOAWAY, or `Connection: close`
    /// on HTTP/1.1), answer what is in flight, then close. Asynchronous.
    public func close() { listener.close() }

    /// A consistent snapshot of the counters and the recorded pushes.
    public var stats: MockWebPushStats { shared.stats.snapshot() }

    /// Zeroes the counters and forgets the recorded pushes (open connections stay counted).
    public func resetStats() { shared.stats.reset() }
}

/// What every connection of one server shares: configuration, the derived-key and VAPID caches,
/// the fault schedule and the statistics; it answers each request (MockWebPushShared+Push.swift).
final class MockWebPushShared: MockRequestHandler, Sendable {
    let configuration: MockWebPushConfiguration
    let stats: MockStatsRecorder<MockWebPushStats>
    let keys: DerivedKeyTable
    let vapidTokens: PresentedVAPIDTokens
    let faults: FaultSchedule<WebPushRefusal.Reason>

    private let subscriptionCounter = Atomic<Int>(0)
    private let decryptCounter = Atomic<Int>(0)
    private let messageIDSeed: UInt64
    private let messageIDs = Atomic<UInt64>(0)

    init(configuration: MockWebPushConfiguration) {
        self.configuration = configuration
        stats = MockStatsRecorder(recordLimit: configuration.recordMessages)
        keys = DerivedKeyTable(seed: configuration.keySeed, limit: configuration.keyCacheSize)
        vapidTokens = PresentedVAPIDTokens(limit: configuration.vapidCacheSize)
        faults = FaultSchedule(
            shares: [(.internalError, configuration.fail500Share), (.unavailable, configuration.fail503Share)],
            seed: configuration.faultSeed, every: configuration.rateLimitEvery.map { (.rateLimited, $0) })
        var generator = SplitMix64()
        messageIDSeed = generator.next()
    }

    /// `count` ids `<prefix>s<n>`, n from a server-wide counter.
    func newIDs(count: Int, prefix: String) -> [String] {
        let last = subscriptionCounter.wrappingAdd(count, ordering: .relaxed).newValue
        return (last - count + 1...last).map { "\(prefix)s\($0)" }
    }

    /// Whether this push (one with a body) is one of the every-Nth that get decrypted.
    func shouldDecrypt() -> Bool {
        let every = configuration.decryptEvery
        guard every > 0 else { return false }
        return decryptCounter.wrappingAdd(1, ordering: .relaxed).oldValue.isMultiple(of: every)
    }

    /// A message id unique for this server: 16 bytes, base64url (autopush's are longer, opaque).
    func nextMessageID() -> String {
        let sequence = messageIDs.wrappingAdd(1, ordering: .relaxed).newValue
        let high = SplitMix64.mix(messageIDSeed &+ sequence &* SplitMix64.gamma)
        let low = SplitMix64.mix(high ^ sequence)
        let bytes =
            (0..<8).map { UInt8(truncatingIfNeeded: high >> ($0 * 8)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> ($0 * 8)) }
        return base64URLEncode(bytes)
    }
}
