import PushCore
import PushMockSupport
public import PushPosix
import PushSync
import Synchronization

/// A Huawei Push Kit look-alike over real TLS 1.2+/1.3 and HTTP/1.1 (ALPN http/1.1; HTTP/2 when
/// `http1` is off), for tests and load tests (docs/notes/hms-push-kit.md; docs/mocks.md says what
/// is inferred).
///
/// One listener serves:
/// - `POST /v3/{projectId}/messages:send` (HarmonyOS NEXT): `Authorization: Bearer <JWT>` signed
///   PS256 by the configured service account, the account's project id, a numeric `push-type`
///   header and `{"payload","target":{"token":[…]},"pushOptions"}`.
/// - `POST /oauth2/v3/token` (form `grant_type=client_credentials`, `client_id` = the app id,
///   `client_secret`): `{"access_token","expires_in","token_type":"Bearer"}`, or Huawei's
///   `{"error":1101,"sub_error":…,"error_description":…}`.
/// - `POST /v1/{appId}/messages:send` (HMS Core, the gateway's "v2" API): one of those access
///   tokens and `{"validate_only":…,"message":{"token":[…],…}}`.
///
/// Sends are answered `{"code","msg","requestId"}` (``HMSCode``); faults and token rules apply
/// after authentication and validation. Connections are spread over every loop of the group.
public final class MockHMSServer: Sendable {
    public let configuration: MockHMSConfiguration
    let shared: MockHMSShared
    private let listener: MockHTTP2Server

    /// Binds the listener (TLS and the configured HTTP version) and starts accepting on `group`'s loops.
    public init(configuration: MockHMSConfiguration, group: EventLoopGroup) throws {
        self.configuration = configuration
        let shared = MockHMSShared(configuration: configuration)
        self.shared = shared
        listener = try MockHTTP2Server(
            settings: configuration.server, commonName: "Pushgate mock HMS", handler: shared, events: shared.stats,
            group: group)
    }

    /// The certificate clients should trust (PEM): the generated one, or the chain given as PEM;
    /// nil when the identity came from files.
    public var certificatePEM: String? { listener.certificatePEM }

    /// The port actually bound (useful with port 0).
    public var localPort: Int { listener.localPort }

    /// `https://<host>:<port>`: the gateway's HMS `url`.
    public var baseURL: String { listener.baseURL }

    /// ``baseURL`` + the token path: the gateway's HMS `token_url` (v1/"v2" API).
    public var tokenURL: String { baseURL + configuration.tokenPath }

    /// Stops accepting and tells every open connection to finish. Asynchronous.
    public func close() { listener.close() }

    /// A consistent snapshot of the counters and the recorded sends.
    public var stats: MockHMSStats { shared.stats.snapshot() }

    /// Zeroes the counters and forgets the recorded sends (open connections stay counted).
    public func resetStats() { shared.stats.reset() }

    /// Forgets every issued access token: v1 sends with them get 401 80200003 until a new token is
    /// fetched (what a client sees when its token expires early).
    public func revokeAccessTokens() { shared.accessTokens.revokeAll() }
}

/// What every connection of one server shares: configuration, issued tokens, verified JWTs, the
/// last valid bodies, the fault schedule and the statistics; it answers each request
/// (MockHMSShared+Requests.swift).
final class MockHMSShared: MockRequestHandler, Sendable {
    /// Fault kinds of the schedule.
    enum Fault: Sendable {
        case innerError
        case flowControl
    }

    let configuration: MockHMSConfiguration
    let stats: MockStatsRecorder<MockHMSStats>
    static let accessTokenPrefix = "mock-hms-"
    let accessTokens = AccessTokenTable(prefix: MockHMSShared.accessTokenPrefix)
    let jwts: HMSJWTVerifier
    let faults: FaultSchedule<Fault>
    /// The last body of each API that passed validation, and what it asked for: a sender repeating a
    /// body (one message to the same tokens, a retry) is not parsed again.
    let lastValid = Locked<[String: MockHMSValidBody]>([:])

    private let requestIDSeed: UInt64
    private let requestIDs = Atomic<UInt64>(0)

    init(configuration: MockHMSConfiguration) {
        self.configuration = configuration
        stats = MockStatsRecorder(recordLimit: configuration.recordMessages)
        jwts = HMSJWTVerifier(configuration: configuration)
        faults = FaultSchedule(
            shares: [(.innerError, configuration.fail500Share), (.flowControl, configuration.fail503Share)],
            seed: configuration.faultSeed)
        var generator = SplitMix64()
        requestIDSeed = generator.next()
    }

    /// A request id shaped like the ones seen from Huawei (24 digits: the time in milliseconds, 5
    /// digits of this server, a 6-digit sequence: unique below a million requests a millisecond).
    func nextRequestID() -> String {
        let sequence = requestIDs.wrappingAdd(1, ordering: .relaxed).newValue % 1_000_000
        let tail = requestIDSeed % 100_000 * 1_000_000 + sequence
        return String(wallClockMillis()) + String(tail).leftPadded(11)
    }
}

/// The last valid send body of an API, and where its one token sits in it: a sender's requests
/// differ only there (one token a request), so a body equal to it around a plain token is valid
/// without parsing its JSON again (mocks are never the bottleneck).
struct MockHMSValidBody: Sendable {
    let body: [UInt8]
    let pushType: Int
    let send: HMSSend
    /// The token's bytes (inside its quotes) when the send has exactly one token.
    let tokenRange: Range<Int>?

    init(body: [UInt8], pushType: Int, send: HMSSend) {
        self.body = body
        self.pushType = pushType
        self.send = send
        tokenRange = send.tokens.count == 1 ? Self.range(of: send.tokens[0], in: body) : nil
    }

    /// The send of `other` when it is this body with another plain token (no quote, backslash or
    /// control byte) in the token's place; nil otherwise.
    func send(ofSameBodyWithAnotherToken other: [UInt8]) -> HMSSend? {
        guard let range = tokenRange else { return nil }
        let prefix = range.lowerBound
        let suffix = body.count - range.upperBound
        guard other.count > prefix + suffix, other.prefix(prefix).elementsEqual(body.prefix(prefix)),
            other.suffix(suffix).elementsEqual(body.suffix(suffix))
        else { return nil }
        let token = other[prefix..<(other.count - suffix)]
        guard token.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") })
        else { return nil }
        var send = self.send
        send.tokens = [String(decoding: token, as: UTF8.self)]
        return send
    }

    private static func range(of token: String, in body: [UInt8]) -> Range<Int>? {
        let needle = [UInt8(ascii: "\"")] + Array(token.utf8) + [UInt8(ascii: "\"")]
        guard needle.count <= body.count else { return nil }
        for start in 0...(body.count - needle.count) where body[start] == needle[0] {
            if body[start..<(start + needle.count)].elementsEqual(needle) {
                return (start + 1)..<(start + needle.count - 1)
            }
        }
        return nil
    }
}
