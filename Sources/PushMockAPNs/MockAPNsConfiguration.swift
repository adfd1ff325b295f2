public import PushCore
import PushCredentials
public import PushMockSupport
public import PushTLS

/// How a ``MockAPNsServer`` behaves: where it listens, what it presents, how strictly it checks
/// provider tokens, and which faults it injects. Start from ``defaults`` and change what a test
/// needs.
public struct MockAPNsConfiguration: Sendable {
    /// The TLS identity the server presents (shared with the mock FCM server).
    public typealias Identity = MockServerIdentity

    /// Listen address. 127.0.0.1 by default: this is a test tool.
    public var host = "127.0.0.1"
    /// 0 = an ephemeral port (see ``MockAPNsServer/localPort``).
    public var port = 0
    public var identity = Identity.generate(subjectAltNames: ["127.0.0.1", "localhost"])

    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection is authenticated (or from the start when
    /// provider tokens are not verified). Real APNs has been seen at 500, 1000 and 1500.
    public var maxConcurrentStreams: UInt32 = 1000
    /// APNs allows only this many streams until a request with a valid provider token arrives,
    /// then raises the limit to ``maxConcurrentStreams`` with a new SETTINGS frame. Applies only
    /// when ``verifyTokens`` is non-empty; nil advertises ``maxConcurrentStreams`` from the start.
    public var streamsBeforeAuth: UInt32? = 1

    /// Provider-token (JWT) verification keys by key ID. Empty: no `authorization` check at all
    /// (any bearer token, or none, as with certificate auth).
    public var verifyTokens: [String: ES256Verifier] = [:]
    /// When set (and tokens are verified), the JWT's `iss` must equal it.
    public var teamID: String?
    /// Tokens whose `iat` is more than this many seconds old get `403 ExpiredProviderToken`.
    public var tokenMaxAgeSeconds: Int64 = 3600

    /// Waits this long (on loop timers, never blocking) before answering each request.
    public var responseDelay: Duration = .zero

    /// Shares (0.0–1.0) of valid requests answered `500 InternalServerError`,
    /// `503 ServiceUnavailable` and `429 TooManyRequests`. The draws come from a counter-based
    /// generator seeded with ``faultSeed`` that all connections share, so the number of faults
    /// over N requests is the same on every run.
    public var fail500Share = 0.0
    public var fail503Share = 0.0
    public var fail429Share = 0.0
    public var faultSeed: UInt64 = 0x5EED
    /// Share (0–1) of otherwise valid requests answered `403 ExpiredProviderToken` whatever their
    /// token: an ExpiredProviderToken storm. Drawn from the same sequence, after the shares above.
    public var expiredTokenShare = 0.0

    /// After this many streams on a connection, send GOAWAY (NO_ERROR, last-stream-id = the Nth
    /// stream, debug data `{"reason":"Shutdown"}`), answer the streams up to it and close.
    public var goAwayAfterStreams: Int?
    /// After this many streams on a connection, close the socket abruptly when the next stream's
    /// HEADERS arrive (no GOAWAY; responses still pending are lost).
    public var dropConnectionAfterStreams: Int?
    /// With ``goAwayAfterStreams``: the GOAWAY's last-stream-id is the last stream answered, below
    /// the streams still waiting for their answer (needs ``responseDelay`` to have any); those are
    /// refused and never answered, so the client must send them again on a new connection.
    public var goAwayBelowInFlight = false
    /// After this many streams on a connection, lower SETTINGS_MAX_CONCURRENT_STREAMS to 1 and go on
    /// serving (streams over the new limit that were already on their way are refused).
    public var lowerStreamsAfter: Int?
    /// After this many streams on a connection, go silent: stop reading (so PINGs go unanswered)
    /// and answer nothing more, keeping the socket open — a peer that hangs. The connection ends
    /// only when the client gives up on it.
    public var stallAfterStreams: Int?
    /// The per-connection faults (GOAWAY, drop, stall, lowered limit) hit only the first this many
    /// connections (numbered from 1 in accept order); nil = every connection.
    public var faultyConnections: Int?

    /// Certificate auth as Apple's hosts do it: clients must present a certificate chaining to
    /// these CAs (PEM); the TLS handshake refuses any other with an alert (`unknown_ca`,
    /// `certificate_expired`; with TLS 1.3 after the client's side of the handshake is done).
    /// nil: no client certificate is asked for.
    public var clientCAPEM: String?
    /// With ``clientCAPEM``: a certificate that verified is still turned away the way APNs turns away
    /// one it will not take (a revoked one, one for the other environment): SETTINGS, then GOAWAY
    /// NO_ERROR with last-stream-id 0 and `{"reason":"<this>"}` (`BadCertificate`,
    /// `BadCertificateEnvironment`), then the close. nil: a verified certificate is served.
    public var certificateGoAwayReason: String?

    /// Tokens (hex, any case) answered `410 Unregistered` with a `timestamp`.
    public var unregisteredTokens: Set<String> = []
    /// The `timestamp` (ms since the epoch) of those 410s; nil = the time of the answer.
    public var unregisteredTimestamp: Int64?
    /// Tokens answered `400 BadDeviceToken`.
    public var badTokens: Set<String> = []
    /// Any reason for a token (checked before the two lists above); the status is the reason's
    /// documented one (400 for unknown reasons). 410 reasons carry a `timestamp`.
    public var rejections: [String: APNsReason] = [:]

    /// Check that the payload is one strict JSON object (400 `PayloadEmpty` otherwise). Costs a
    /// parse per request; turn off to measure only the transport.
    public var validatePayloadJSON = true
    /// A request body longer than this is answered `413 PayloadTooLarge` at once and its stream
    /// reset; only the first (limit + 1) bytes of any body are kept.
    public var maxBodyBytes = 64 << 10

    /// How many accepted (200) requests to keep, headers and payload, for tests (0 = none).
    public var recordRequests = 1000
    /// Count 200s per device token (``MockAPNsStats/deliveredPerToken``), for at most this many
    /// distinct tokens (0 = don't count).
    public var maxTrackedTokens = 100_000
    /// Remember the max-in-flight gauge for at most this many connections.
    public var maxTrackedConnections = 10_000

    public init() {}

    /// 127.0.0.1, ephemeral port, generated certificate, 1000 streams, no token checks, no faults.
    /// Where the channel management API listens (Apple's `api-manage-broadcast` host, port 2196
    /// or 2195); nil: not served. Port 0 picks a free one (``MockAPNsServer/channelsPort``).
    public var channelsListen: (host: String, port: Int)?
    /// Seeds the channel ids the channel API issues.
    public var channelSeed: UInt64 = 0xC4A7

    public static var defaults: Self { Self() }

    /// Token verification is on.
    public var verifiesTokens: Bool { !verifyTokens.isEmpty }
}

extension MockAPNsConfiguration {
    /// The `iat` of a provider token (the JWT, without `bearer `) when its key is known, its
    /// signature verifies and its team matches; nil otherwise.
    func providerTokenIssuedAt(_ jwt: String) -> Int64? {
        guard let dot = jwt.utf8.firstIndex(of: UInt8(ascii: ".")),
            let headerBytes = base64URLDecode(String(jwt[..<dot])),
            let header = try? JSONParser.parse(headerBytes),
            case .string(let keyID)? = header["kid"],
            let verifier = verifyTokens[keyID],
            let claims = APNsProviderToken.verify(jwt, verifier: verifier),
            claims.keyID == keyID
        else { return nil }
        if let teamID, claims.teamID != teamID { return nil }
        return claims.issuedAt
    }
}
