public import PushMockSupport
public import PushTLS

/// How a ``MockWebPushServer`` behaves: where it listens, the seed its subscriptions are derived
/// from, which subscription ids it refuses, which faults it injects and how much it checks. Start
/// from ``init(keySeed:)`` (or ``generated()``) and change what a test needs.
public struct MockWebPushConfiguration: MockServerConfiguration {
    /// Listen address, TLS identity, stream limit, response delay, GOAWAY (read and written as the
    /// configuration's own members). Both HTTP/2 and HTTP/1.1 by default, chosen per connection
    /// by ALPN (``MockServerSettings/offersBothVersions``), as push services' load balancers do.
    public var server: MockServerSettings = {
        var settings = MockServerSettings()
        settings.offersBothVersions = true
        return settings
    }()

    /// The 32 bytes every subscription's private key and auth secret are derived from (with its
    /// id, HKDF-SHA-256): the same seed gives the same subscriptions on every run.
    public let keySeed: [UInt8]

    // MARK: Subscription-id rules

    /// Ids starting with this, or listed, are answered `410 Gone` (errno 106, "No such
    /// subscription"), as for an unsubscribed browser.
    public var gonePrefix: String?
    public var goneIDs: Set<String> = []
    /// Ids starting with this, or listed, are answered `404 Not Found` (errno 102, "Invalid
    /// token"), as for an endpoint the service never issued.
    public var notFoundPrefix: String?
    public var notFoundIDs: Set<String> = []

    /// Whether `id` is answered 410.
    func isGone(_ id: String) -> Bool { goneIDs.contains(id) || gonePrefix.map(id.hasPrefix) == true }

    /// Whether `id` is answered 404.
    func isNotFound(_ id: String) -> Bool {
        notFoundIDs.contains(id) || notFoundPrefix.map(id.hasPrefix) == true
    }

    // MARK: Faults (applied to pushes that passed every check)

    /// Shares (0.0–1.0) of valid pushes answered 500 and 503, drawn from a counter-based
    /// generator seeded with ``faultSeed`` (the same number of faults over N pushes on every run).
    public var fail500Share = 0.0
    public var fail503Share = 0.0
    public var faultSeed: UInt64 = 0x5EED
    /// Every Nth valid push (counted over the server) is answered `429 Too Many Requests`.
    public var rateLimitEvery: Int?
    /// `Retry-After` seconds on 429 and 503 answers; nil sends none.
    public var retryAfterSeconds: Int? = 1

    // MARK: Cost

    /// Decrypt every Nth push with a body (1 = every one, 0 = none): decrypting costs an ECDH per
    /// message, and a benchmark's mock must not be its bottleneck. Pushes not decrypted are
    /// accepted unread.
    public var decryptEvery = 1
    /// Subscriptions whose derived keys are kept (the table is emptied when full), and verified
    /// VAPID tokens kept (the same).
    public var keyCacheSize = 10_000
    public var vapidCacheSize = 4096

    // MARK: Recording

    /// How many accepted (201) pushes to keep, for tests and the stats file (0 = none).
    public var recordMessages = 1000

    /// Derives subscriptions from `keySeed`, which must be 32 bytes (see ``init(keySeedHex:)``).
    public init(keySeed: [UInt8]) {
        precondition(keySeed.count == 32, "the key seed is 32 bytes")
        self.keySeed = keySeed
    }

    /// From 64 hex digits; nil otherwise.
    public init?(keySeedHex hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var seed: [UInt8] = []
        for index in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            seed.append(byte)
        }
        self.init(keySeed: seed)
    }

    /// A random seed: subscriptions valid only for this run.
    public static func generated() throws(TLSError) -> MockWebPushConfiguration {
        MockWebPushConfiguration(keySeed: try SecureRandom.bytes(count: 32))
    }

    /// The seed as 64 hex digits (what `--seed` takes).
    public var keySeedHex: String {
        keySeed.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
