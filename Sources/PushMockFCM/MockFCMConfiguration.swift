public import PushCredentials
public import PushMockSupport
public import PushTLS

/// How a ``MockFCMServer`` behaves: where it listens, whose assertions it accepts, which tokens
/// it refuses and which faults it injects. Start from ``init(serviceAccount:)`` (or
/// ``generated(projectID:)``) and change what a test needs.
public struct MockFCMConfiguration: MockServerConfiguration {
    /// Listen address, TLS identity, stream limit, response delay, GOAWAY, body limit (read and
    /// written as the configuration's own members: `configuration.maxConcurrentStreams`).
    public var server = MockServerSettings()

    // MARK: OAuth2 token endpoint

    /// The project whose `/v1/projects/{project_id}/messages:send` is served; other projects get
    /// `403 PERMISSION_DENIED` (what FCM answers when the credentials have no access to a project).
    public var projectID: String
    /// The assertion's `iss` must be this (the service account's `client_email`).
    public var clientEmail: String
    /// Checks assertion signatures: the service account's public half.
    public var assertionVerifier: RSAVerifier
    /// Path of the token endpoint (the path of the service account's `token_uri`).
    public var tokenPath = "/token"
    /// Audiences accepted besides the token URL as the mock is addressed
    /// (`https://<:authority><tokenPath>`), e.g. `https://oauth2.googleapis.com/token` for a real
    /// service-account file.
    public var extraAudiences: Set<String> = []
    /// An assertion's `scope` must include one of these (docs/providers.md B.5: the Admin SDKs ask for
    /// `cloud-platform`, which covers FCM).
    public var acceptedScopes: Set<String> = [
        OAuthAssertion.firebaseMessagingScope, "https://www.googleapis.com/auth/cloud-platform",
    ]
    /// `expires_in` of issued access tokens, in seconds; they are refused (401) after that.
    public var accessTokenLifetime = 3600

    // MARK: Faults (applied to sends that passed authentication and validation)

    /// Shares (0.0–1.0) of valid sends answered `500 INTERNAL`, `503 UNAVAILABLE` and
    /// `429 QUOTA_EXCEEDED`, drawn from a counter-based generator seeded with ``faultSeed`` and
    /// shared by all connections (the same number of faults over N sends on every run).
    public var fail500Share = 0.0
    public var fail503Share = 0.0
    public var fail429Share = 0.0
    public var faultSeed: UInt64 = 0x5EED
    /// Every Nth valid send (counted over the server) is answered `503 UNAVAILABLE`.
    public var unavailableEvery: Int?
    /// `Retry-After` seconds on 503 and 429 answers; nil sends none.
    public var retryAfterSeconds: Int? = 1

    // MARK: Token rules (for `message.token` targets)

    /// Tokens answered `404 UNREGISTERED`, and a prefix that marks more of them.
    public var unregisteredTokens: Set<String> = []
    public var unregisteredPrefix: String?
    /// Tokens answered `403 SENDER_ID_MISMATCH`, and a prefix.
    public var mismatchedSenderTokens: Set<String> = []
    public var mismatchedSenderPrefix: String?
    /// Tokens answered `400 INVALID_ARGUMENT` on `message.token` ("not a valid FCM registration token").
    public var invalidTokens: Set<String> = []

    // MARK: Recording

    /// How many accepted (200) sends to keep, for tests (0 = none).
    public var recordMessages = 1000
    /// Count 200s per token for at most this many distinct tokens (0 = don't count).
    public var maxTrackedTokens = 100_000

    /// Accepts assertions from this project, client and key.
    public init(projectID: String, clientEmail: String, assertionVerifier: RSAVerifier) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.assertionVerifier = assertionVerifier
    }

    /// Accepts `account`'s assertions (its public half, `client_email`, `project_id`); extra
    /// audiences include its `token_uri`, so a real file's assertions are accepted as they are.
    public init(serviceAccount account: GoogleServiceAccount) throws(TLSError) {
        self.init(
            projectID: account.projectID, clientEmail: account.clientEmail, assertionVerifier: try account.verifier())
        extraAudiences = [account.tokenURI]
    }

    /// A fresh RSA key and a configuration accepting it, for `projectID`; the private key is what
    /// ``MockFCMServer/serviceAccount(privateKeyPEM:)`` puts into a service-account file.
    public static func generated(
        projectID: String = "pushgate-mock"
    ) throws(TLSError) -> (configuration: MockFCMConfiguration, privateKeyPEM: String) {
        let keys = try RSAKeyPair.generate()
        let configuration = MockFCMConfiguration(
            projectID: projectID, clientEmail: "pushgate-mock@\(projectID).iam.gserviceaccount.com",
            assertionVerifier: try RSAVerifier(scheme: .rs256, publicKeyPEM: keys.publicKeyPEM))
        return (configuration, keys.privateKeyPEM)
    }

    /// Whether `token` is one the token rules refuse, and how.
    func tokenRule(_ token: String) -> FCMErrorResponse? {
        if invalidTokens.contains(token) { return .invalidRegistrationToken }
        if unregisteredTokens.contains(token) || unregisteredPrefix.map(token.hasPrefix) == true {
            return .unregistered
        }
        if mismatchedSenderTokens.contains(token) || mismatchedSenderPrefix.map(token.hasPrefix) == true {
            return .senderIDMismatch
        }
        return nil
    }
}
