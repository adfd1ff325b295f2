import PushCore
import PushMockSupport
public import PushPosix
import Synchronization

/// An Amazon Device Messaging look-alike, with the Login-with-Amazon token endpoint, over real
/// TLS 1.2+/1.3 and HTTP/1.1 like Amazon's (ALPN http/1.1; HTTP/2 when `http1` is off), for tests
/// and load tests (docs/providers.md D).
///
/// One listener serves both:
/// - `POST /auth/o2/token` (form: `grant_type=client_credentials`, `scope=messaging:push`,
///   `client_id`, `client_secret`): answers `{"access_token":"Atc|…","expires_in":3600,
///   "scope":"messaging:push","token_type":"bearer"}`, or an OAuth2 error
///   (`{"error":"invalid_client","error_description":"…"}`).
/// - `POST /messaging/registrations/{registrationId}/messages`: the bearer token must be one the
///   mock issued and unexpired (else 401 `AccessTokenExpired`), the `X-Amzn-Type-Version` and
///   `X-Amzn-Accept-Type` headers ADM's (else 400), the body a valid message (else 400/413 with
///   ADM's `{"reason":"…"}`); then faults and registration-id rules apply; 200 answers
///   `{"registrationID":"<id or its canonical id>"}`. Every send answer carries
///   `x-amzn-requestid`.
///
/// Connections are spread over every loop of the group; each stays on its loop.
public final class MockADMServer: Sendable {
    public let configuration: MockADMConfiguration
    let shared: MockADMShared
    private let listener: MockHTTP2Server

    /// Binds the listener (TLS and the configured HTTP version) and starts accepting on `group`'s loops.
    public init(configuration: MockADMConfiguration, group: EventLoopGroup) throws {
        self.configuration = configuration
        let shared = MockADMShared(configuration: configuration)
        self.shared = shared
        listener = try MockHTTP2Server(
            settings: configuration.server, commonName: "Pushgate mock ADM", handler: shared, events: shared.stats,
            group: group)
    }

    /// The certificate clients should trust (PEM): the generated one, or the chain given as PEM;
    /// nil when the identity came from files.
    public var certificatePEM: String? { listener.certificatePEM }

    /// The port actually bound (useful with port 0).
    public var localPort: Int { listener.localPort }

    /// `https://<host>:<port>` as clients on this machine address it (127.0.0.1 when listening on
    /// a wildcard address): the gateway's ADM `url`.
    public var baseURL: String { listener.baseURL }

    /// ``baseURL`` + the token path: the gateway's ADM `token_url`.
    public var tokenURL: String { baseURL + configuration.tokenPath }

    /// Stops accepting and tells every open connection to finish: GOAWAY, answer what is in
    /// flight, then close. Asynchronous (each connection acts on its own loop).
    public func close() { listener.close() }

    /// A consistent snapshot of the counters and the recorded sends.
    public var stats: MockADMStats { shared.stats.snapshot() }

    /// Zeroes the counters and forgets the recorded sends (open connections stay counted).
    public func resetStats() { shared.stats.reset() }

    /// Forgets every issued access token: sends with them get 401 `AccessTokenExpired` until a
    /// new token is fetched (what a client sees when its token expires early).
    public func revokeAccessTokens() { shared.accessTokens.revokeAll() }
}

/// What every connection of one server shares: configuration, issued tokens, the fault schedule
/// and the statistics; it answers each request (MockADMShared+Requests.swift).
final class MockADMShared: MockRequestHandler, Sendable {
    let configuration: MockADMConfiguration
    let stats: MockStatsRecorder<MockADMStats>
    /// Login with Amazon's access tokens start `Atc|`.
    let accessTokens = AccessTokenTable(prefix: "Atc|mock-")
    let faults: FaultSchedule<ADMReason>

    private let requestIDSeed: UInt64
    private let requestIDs = Atomic<UInt64>(0)

    init(configuration: MockADMConfiguration) {
        self.configuration = configuration
        stats = MockStatsRecorder(recordLimit: configuration.recordMessages)
        faults = FaultSchedule(
            shares: [
                (.internalServerError, configuration.fail500Share), (.serviceUnavailable, configuration.fail503Share),
            ],
            seed: configuration.faultSeed, every: configuration.rateLimitEvery.map { (.maxRateExceeded, $0) })
        var generator = SplitMix64()
        requestIDSeed = generator.next()
    }

    /// A request id unique for this server, shaped like Amazon's (a UUID: 8-4-4-4-12 hex digits).
    func nextRequestID() -> String {
        let sequence = requestIDs.wrappingAdd(1, ordering: .relaxed).newValue
        let high = SplitMix64.mix(requestIDSeed &+ sequence &* SplitMix64.gamma)
        let low = SplitMix64.mix(high ^ sequence)
        let hex = String(high, radix: 16).leftPadded(16) + String(low, radix: 16).leftPadded(16)
        let bounds = [0, 8, 12, 16, 20, 32]
        let characters = Array(hex)
        return (0..<5).map { String(characters[bounds[$0]..<bounds[$0 + 1]]) }.joined(separator: "-")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
