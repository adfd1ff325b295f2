public import PushCredentials
public import PushMockSupport
public import PushTLS

/// How a ``MockHMSServer`` behaves: where it listens, which service account (v3) and which app id
/// and client secret (v1) it accepts, which tokens it refuses, and which faults it injects. Start
/// from ``init(serviceAccount:)`` (or ``generated(projectID:)``) and change what a test needs.
public struct MockHMSConfiguration: MockServerConfiguration {
    /// Listen address, TLS identity, stream limit, response delay, GOAWAY, body limit (read and
    /// written as the configuration's own members). HTTP/1.1 by default: every Huawei client read
    /// speaks it, and whether push-api.cloud.huawei.com offers h2 is unverified (the notes, 3).
    /// Bodies up to 512 KB are read: 1000 tokens (about 130 bytes each) besides 4096 bytes of message.
    public var server: MockServerSettings = {
        var settings = MockServerSettings()
        settings.http1 = true
        settings.maxBodyBytes = 512 << 10
        return settings
    }()

    // MARK: v3 (service-account JWT)

    /// The account whose JWTs v3 sends must carry; its `project_id` is the only one served.
    public var serviceAccount: HuaweiServiceAccount
    /// Checks the JWTs' PS256 signatures (the account's public half).
    public var jwtVerifier: RSAVerifier
    /// The `aud` every JWT must have ("fixed", Huawei's token URI).
    public var jwtAudience = HuaweiServiceAccount.audience
    /// The longest `exp − iat` accepted, in seconds (else 80300036). Huawei documents 3600 s as the
    /// JWT's lifetime and refuses more than a day; the mock holds senders to the hour, plus a minute.
    public var maxJWTLifetime = 3660
    /// How far `iat` may be ahead of the mock's clock, in seconds.
    public var allowedClockSkew = 60

    // MARK: v1 (OAuth 2.0 client credentials)

    /// The app id (OAuth client id) the token endpoint and `/v1/{appId}/messages:send` accept:
    /// digits, as Huawei's (`^[0-9]{1,64}$`).
    public var appID = "101234567"
    /// The app's client secret.
    public var clientSecret = "pushgate-mock-hms-client-secret"
    /// Path of the token endpoint.
    public var tokenPath = "/oauth2/v3/token"
    /// `expires_in` of issued access tokens, in seconds; sends with them get 401 80200003 after that.
    public var accessTokenLifetime = 3600

    // MARK: Tokens

    /// Push tokens refused as invalid, and a prefix that marks more of them: a request whose tokens
    /// are all invalid gets 80300007, one with some valid ones 200 80100000 (partial success).
    public var badTokens: Set<String> = []
    public var badTokenPrefix: String?
    /// The reason the failed tokens are listed under in v3's `msg` (`illegalTokens`).
    public var badTokenReason = "tokenFormatError"
    /// The HTTP status of an 80300007 answer (400; Huawei's is unverified, 200 has been seen on v1).
    public var allInvalidStatus = 400

    // MARK: Faults (applied to sends that passed authentication and validation)

    /// Shares (0.0–1.0) of valid sends answered 500 (81000001 "Inner Error.") and 503 (flow control,
    /// no body, as Huawei documents the status only), drawn from a counter-based generator seeded with
    /// ``faultSeed`` and shared by all connections.
    public var fail500Share = 0.0
    public var fail503Share = 0.0
    public var faultSeed: UInt64 = 0x5EED
    /// `Retry-After` seconds on 503 answers; nil (the default) sends none: Huawei documents none.
    public var retryAfterSeconds: Int?

    // MARK: Recording

    /// How many accepted sends to keep, for tests (0 = none).
    public var recordMessages = 1000
    /// Per-token delivery counts are kept for at most this many distinct tokens.
    public var maxTrackedTokens = 100_000

    /// Accepts `serviceAccount`'s JWTs.
    public init(serviceAccount: HuaweiServiceAccount) throws(TLSError) {
        self.serviceAccount = serviceAccount
        jwtVerifier = try serviceAccount.verifier()
    }

    /// A configuration with a freshly generated account (RSA-2048; see
    /// ``PushCredentials/HuaweiServiceAccount/generated(projectID:bits:)``).
    public static func generated(projectID: String? = nil) throws(TLSError) -> MockHMSConfiguration {
        try MockHMSConfiguration(serviceAccount: try HuaweiServiceAccount.generated(projectID: projectID))
    }

    /// Whether `token` is refused as invalid.
    func isBad(_ token: String) -> Bool {
        badTokens.contains(token) || badTokenPrefix.map(token.hasPrefix) == true
    }

    var hasTokenRules: Bool { !badTokens.isEmpty || badTokenPrefix != nil }
}
