import PushCore
public import PushCredentials
import PushMockSupport
public import PushPosix
public import PushTLS
import PushTransport
import Synchronization

/// An FCM HTTP v1 look-alike, with Google's OAuth2 token endpoint, over real TLS 1.2+/1.3 and
/// HTTP/2 (ALPN h2), or HTTP/1.1 with `http1`, for tests and load tests (docs/providers.md B).
///
/// One listener serves both:
/// - `POST <tokenPath>` (form-encoded `grant_type` + `assertion`): the RS256 assertion is checked
///   against the configured service account; the answer is an access token or Google's
///   `{"error":"invalid_grant",…}`.
/// - `POST /v1/projects/{project}/messages:send`: the bearer token must be one the mock issued
///   and unexpired (else 401), the project the configured one (else 403), the body a valid send
///   (else 400 with FCM's error body); then faults and token rules apply; 200 answers
///   `{"name":"projects/<p>/messages/<id>"}`.
///
/// Connections are spread over every loop of the group; each stays on its loop.
public final class MockFCMServer: Sendable {
    public let configuration: MockFCMConfiguration
    /// The certificate clients should trust (PEM): the generated one, or the chain given as PEM;
    /// nil when the identity came from files.
    public var certificatePEM: String? { listener.certificatePEM }
    let shared: MockFCMShared
    private let listener: MockHTTP2Server

    /// Binds the listener (TLS and the configured HTTP version) and starts accepting on `group`'s loops.
    public init(configuration: MockFCMConfiguration, group: EventLoopGroup) throws {
        self.configuration = configuration
        let shared = MockFCMShared(configuration: configuration)
        self.shared = shared
        listener = try MockHTTP2Server(
            settings: configuration.server, commonName: "Pushgate mock FCM", handler: shared, events: shared.stats,
            group: group)
    }

    /// The port actually bound (useful with port 0).
    public var localPort: Int { listener.localPort }

    /// The token endpoint's URL as clients on this machine address it (`https://127.0.0.1:<port>/token`
    /// when listening on a wildcard address): what a service account's `token_uri` should say.
    public var tokenURL: String { listener.baseURL + configuration.tokenPath }

    /// A service account whose assertions this server accepts: the configured project and client
    /// email, `token_uri` = ``tokenURL``, and `privateKeyPEM` (the private half of the configured
    /// verifier, e.g. from ``MockFCMConfiguration/generated(projectID:)``).
    public func serviceAccount(privateKeyPEM: String) throws(TLSError) -> GoogleServiceAccount {
        let keyID = SHA256.hash(privateKeyPEM).prefix(20).map { byte in
            let hex = Array("0123456789abcdef")
            return String([hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }.joined()
        return try GoogleServiceAccount(
            projectID: configuration.projectID, privateKeyID: keyID, privateKey: privateKeyPEM,
            clientEmail: configuration.clientEmail, tokenURI: tokenURL)
    }

    /// Stops accepting and tells every open connection to finish: GOAWAY, answer what is in
    /// flight, then close. Asynchronous (each connection acts on its own loop).
    public func close() { listener.close() }

    /// A consistent snapshot of the counters and the recorded sends.
    public var stats: MockFCMStats { shared.stats.snapshot() }

    /// Zeroes the counters and forgets the recorded sends (open connections stay counted).
    public func resetStats() { shared.stats.reset() }

    /// Forgets every issued access token: sends with them get 401 until a new token is fetched
    /// (what a client sees when Google revokes or expires its token early).
    public func revokeAccessTokens() { shared.accessTokens.revokeAll() }
}

/// What every connection of one server shares: configuration, issued tokens, the fault
/// schedule and the statistics; it answers each request (MockFCMShared+Requests.swift).
final class MockFCMShared: MockRequestHandler, Sendable {
    let configuration: MockFCMConfiguration
    let stats: MockStatsRecorder<MockFCMStats>
    let accessTokens = AccessTokenTable(prefix: "ya29.mock-")
    let faults: FaultSchedule<FCMErrorResponse>

    let sendPrefix = "/v1/projects/"
    let sendSuffix = "/messages:send"

    private let messageIDs = Atomic<UInt64>(0)

    init(configuration: MockFCMConfiguration) {
        self.configuration = configuration
        stats = MockStatsRecorder(recordLimit: configuration.recordMessages)
        faults = FaultSchedule(
            shares: [
                (.internalError, configuration.fail500Share), (.unavailable, configuration.fail503Share),
                (.quotaExceeded, configuration.fail429Share),
            ],
            seed: configuration.faultSeed, every: configuration.unavailableEvery.map { (.unavailable, $0) })
    }

    /// A message id unique for this server: `0:<ms since the epoch>%<sequence, hex>`, the shape of
    /// FCM's own ids.
    func nextMessageID() -> String {
        let sequence = messageIDs.wrappingAdd(1, ordering: .relaxed).newValue
        return "0:\(wallClockMillis())%\(String(sequence, radix: 16))"
    }
}
