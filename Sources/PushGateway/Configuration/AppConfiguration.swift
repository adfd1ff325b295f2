import PushTransport
/// One app that Pushgate sends for, from the `apps` list of the config file.
///
/// The credentials (APNs: `team_id`, `key_id`, `key_file` or `cert_file` + `key_file`; FCM:
/// `service_account_file`; ADM: `client_id` + `client_secret_file`) are read when the app's client is made; this type only holds what the
/// config says. Secrets are never logged: the
/// description shows names and paths only.
public struct AppConfiguration: Sendable, Equatable {
    public enum Platform: String, Sendable {
        case apns
        /// Firebase Cloud Messaging, HTTP v1 API.
        case fcm
        /// Amazon Device Messaging.
        case adm
    }

    public var name: String
    public var platform: Platform
    /// The default `apns-topic`.
    public var bundleID: String
    public var teamID: String
    public var keyID: String
    /// The `.p8` signing key (token auth), or the TLS client key (certificate auth).
    public var keyFile: String
    /// The TLS client certificate (certificate auth).
    public var certFile: String
    /// Apple's sandbox host instead of production.
    public var sandbox: Bool
    /// Overrides the provider host (Apple's, or `https://fcm.googleapis.com`), e.g.
    /// `https://127.0.0.1:8443` for a mock.
    public var url: String
    /// Extra trusted CA certificates (PEM) for the provider's TLS certificate.
    public var caFile: String
    /// HTTP/2 connections to keep open to the provider. Default 1.
    public var connections: Int
    /// TCP connect plus TLS handshake, seconds (`connect_timeout_seconds`). Default 10.
    public var connectTimeoutSeconds = 10
    /// Silence on a provider connection before a PING, seconds (`ping_interval_seconds`). Default 60.
    public var pingIntervalSeconds = 60
    /// No bytes within this of a PING: the connection is dead and replaced, seconds
    /// (`ping_timeout_seconds`; also the silence before a PING while requests wait). Default 10.
    public var pingTimeoutSeconds = 10
    /// Requests waiting on a provider connection that answers nothing for this long: the
    /// connection is given up and replaced, seconds (`stall_timeout_seconds`). Default 30.
    public var stallTimeoutSeconds = 30
    /// `http_version`: `"auto"` (the server's ALPN choice; the default for fcm and adm), `"2"` (the
    /// only one for apns) or `"1.1"`.
    public var httpVersion = HTTPVersionPolicy.http2
    /// `proxy`: `http://[user:password@]host:port` to tunnel through (CONNECT); `"direct"` for none
    /// whatever the environment says; empty: `HTTPS_PROXY` / `NO_PROXY`. May hold a password: never
    /// logged (``HTTPProxy`` redacts it).
    public var proxy = ""
    /// FCM: the Google service-account JSON key file (its key signs the OAuth2 assertions).
    public var serviceAccountFile = ""
    /// FCM: the Firebase project; empty: the service account's `project_id`.
    public var projectID = ""
    /// FCM: overrides the service account's `token_uri`; ADM: overrides Login with Amazon's token
    /// URL (where access tokens are fetched).
    public var tokenURL = ""
    /// ADM: the security profile's client id.
    public var clientID = ""
    /// ADM: a file holding the client secret (only the secret, whitespace around it ignored).
    public var clientSecretFile = ""
    /// The `.p8` key itself instead of `keyFile` (the built-in demo app; not a config key).
    public var keyPEM = ""
    /// Trusted CA certificates as PEM instead of `caFile` (the built-in demo app; not a config key).
    public var caPEM = ""

    public init(name: String, platform: Platform = .apns, bundleID: String = "") {
        self.name = name
        self.platform = platform
        self.bundleID = bundleID
        self.teamID = ""
        self.keyID = ""
        self.keyFile = ""
        self.certFile = ""
        self.sandbox = false
        self.url = ""
        self.caFile = ""
        self.connections = 1
    }
}
