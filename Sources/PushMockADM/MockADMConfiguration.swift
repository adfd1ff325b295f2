public import PushMockSupport
public import PushTLS

/// How a ``MockADMServer`` behaves: where it listens, whose client credentials it accepts, which
/// registration ids it refuses or replaces, and which faults it injects. Start from
/// ``init(credentials:)`` (or ``generated()``) and change what a test needs.
public struct MockADMConfiguration: MockServerConfiguration {
    /// Listen address, TLS identity, stream limit, response delay, GOAWAY, body limit (read and
    /// written as the configuration's own members: `configuration.maxConcurrentStreams`). A send
    /// over 6144 bytes is answered 413 whatever `maxBodyBytes` says.
    /// HTTP/1.1 by default, as Amazon's api.amazon.com speaks (``MockServerSettings/http1``).
    public var server: MockServerSettings = {
        var settings = MockServerSettings()
        settings.http1 = true
        return settings
    }()

    // MARK: Login with Amazon token endpoint

    /// The only `client_id` + `client_secret` pair the token endpoint accepts.
    public var credentials: MockADMCredentials
    /// Path of the token endpoint, matched without regard to case (Amazon's page writes
    /// `/auth/O2/token`, clients usually `/auth/o2/token`).
    public var tokenPath = "/auth/o2/token"
    /// The `scope` a token request must ask for, and the one granted.
    public var scope = "messaging:push"
    /// `expires_in` of issued access tokens, in seconds; sends with them are refused (401
    /// `AccessTokenExpired`) after that.
    public var accessTokenLifetime = 3600

    // MARK: Faults (applied to sends that passed authentication and validation)

    /// Shares (0.0–1.0) of valid sends answered `500 InternalServerError` and
    /// `503 ServiceUnavailable`, drawn from a counter-based generator seeded with ``faultSeed``
    /// and shared by all connections (the same number of faults over N sends on every run).
    public var fail500Share = 0.0
    public var fail503Share = 0.0
    public var faultSeed: UInt64 = 0x5EED
    /// Every Nth valid send (counted over the server) is answered `429 MaxRateExceeded`.
    public var rateLimitEvery: Int?
    /// `Retry-After` seconds on 429 and 503 answers; nil sends none.
    public var retryAfterSeconds: Int? = 1

    // MARK: Registration-id rules

    /// Ids answered `410 Unregistered`, and a prefix that marks more of them.
    public var unregisteredIDs: Set<String> = []
    public var unregisteredPrefix: String?
    /// Ids answered `400 InvalidRegistrationId`, and a prefix.
    public var invalidIDs: Set<String> = []
    public var invalidPrefix: String?
    /// Ids that have been replaced: a send to one is delivered and answered with its canonical
    /// id (`{"registrationID":"<new>"}`), as ADM does when an app instance re-registered.
    public var canonicalIDs: [String: String] = [:]
    /// Ids starting with this prefix are replaced too: the canonical id is the id without the
    /// prefix, followed by `-canonical` (`old-abc` → `abc-canonical` for prefix `old-`).
    public var canonicalPrefix: String?

    // MARK: Recording

    /// How many accepted (200) sends to keep, for tests (0 = none).
    public var recordMessages = 1000

    /// Accepts these client credentials.
    public init(credentials: MockADMCredentials) {
        self.credentials = credentials
    }

    /// Fresh random client credentials (for `clientID` when given) and a configuration accepting them.
    public static func generated(clientID: String? = nil) throws(TLSError) -> MockADMConfiguration {
        MockADMConfiguration(credentials: try MockADMCredentials.generate(clientID: clientID))
    }

    /// What a send to `registrationID` gets once it is valid: a refusal, or the id to answer with.
    func registrationRule(_ registrationID: String) -> Result<String, ADMReason> {
        if invalidIDs.contains(registrationID) || invalidPrefix.map(registrationID.hasPrefix) == true {
            return .failure(.invalidRegistrationId)
        }
        if unregisteredIDs.contains(registrationID) || unregisteredPrefix.map(registrationID.hasPrefix) == true {
            return .failure(.unregistered)
        }
        if let canonical = canonicalIDs[registrationID] { return .success(canonical) }
        if let prefix = canonicalPrefix, registrationID.hasPrefix(prefix) {
            return .success(registrationID.dropFirst(prefix.count) + "-canonical")
        }
        return .success(registrationID)
    }
}
