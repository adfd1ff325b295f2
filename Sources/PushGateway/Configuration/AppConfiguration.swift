public import PushCore
public import PushTransport
public import PushWebPush

/// One app that Pushgate sends for, from the `apps` list of the config file: the keys every
/// platform has, and in ``keys`` only its own platform's.
///
/// Credentials are read when the app's client is made; this type only holds what the config says.
/// Secrets are never logged: the description shows names and paths only.
public struct AppConfiguration: Sendable, Equatable {
    /// A platform's name, as the config's `platform` key and the metrics' `platform` label spell it.
    public enum Platform: String, Sendable {
        case apns
        /// Firebase Cloud Messaging, HTTP v1 API.
        case fcm
        /// Amazon Device Messaging.
        case adm
        /// Browsers' push services (RFC 8030, 8291, 8292).
        case webpush
        /// Huawei Push Kit (HarmonyOS NEXT through v3, HMS Core devices through v2).
        case hms
    }

    /// The keys only one platform has.
    public enum PlatformKeys: Sendable, Equatable {
        case apns(APNsKeys)
        case fcm(FCMKeys)
        case adm(ADMKeys)
        case webpush(WebPushKeys)
        case hms(HMSKeys)

        public var platform: Platform {
            switch self {
            case .apns: .apns
            case .fcm: .fcm
            case .adm: .adm
            case .webpush: .webpush
            case .hms: .hms
            }
        }
    }

    /// APNs: the default topic and the credentials (token auth: `team_id`, `key_id`, `key_file`;
    /// certificate auth: `cert_file` + `key_file`).
    public struct APNsKeys: Sendable, Equatable {
        /// The default `apns-topic` (`bundle_id`).
        public var bundleID: String
        public var teamID = ""
        public var keyID = ""
        /// The `.p8` signing key (token auth), or the TLS client key (certificate auth).
        public var keyFile = ""
        /// The TLS client certificate (certificate auth).
        public var certFile = ""
        /// Apple's sandbox host instead of production.
        public var sandbox = false
        /// `allow_expired_certificate`: load the app even though its `cert_file` has expired (APNs
        /// will refuse it; a warning says so). Default false: an expired certificate refuses to load.
        public var allowExpiredCertificate = false
        /// Where the channel management API is (`channels_url`); empty: Apple's
        /// (`api-manage-broadcast[.sandbox].push.apple.com`, port 2196 or 2195).
        public var channelsURL = ""
        /// The `.p8` key itself instead of `keyFile` (the built-in demo app; not a config key).
        public var keyPEM = ""

        public init(bundleID: String = "") { self.bundleID = bundleID }
    }

    /// FCM: the Google service account whose key signs the OAuth2 assertions.
    public struct FCMKeys: Sendable, Equatable {
        /// The service-account JSON key file (`service_account_file`).
        public var serviceAccountFile = ""
        /// The Firebase project (`project_id`); empty: the service account's `project_id`.
        public var projectID = ""
        /// Overrides the service account's `token_uri` (`token_url`).
        public var tokenURL = ""

        public init(serviceAccountFile: String = "") { self.serviceAccountFile = serviceAccountFile }
    }

    /// ADM: the security profile's client credentials.
    public struct ADMKeys: Sendable, Equatable {
        /// The security profile's client id (`client_id`).
        public var clientID = ""
        /// A file holding the client secret, only the secret, whitespace around it ignored
        /// (`client_secret_file`).
        public var clientSecretFile = ""
        /// Overrides Login with Amazon's token URL (`token_url`).
        public var tokenURL = ""

        public init(clientID: String = "", clientSecretFile: String = "") {
            self.clientID = clientID
            self.clientSecretFile = clientSecretFile
        }
    }

    /// Huawei Push Kit: v3 signs its own JWTs with a service-account key (`service_account_file`); v2
    /// trades the app's OAuth client credentials (`app_id`, `client_secret_file`) for access tokens.
    public struct HMSKeys: Sendable, Equatable {
        public var api: HMSAPI
        /// v3: the key file as Huawei's API Console downloads it.
        public var serviceAccountFile = ""
        /// v2: the app's OAuth client id (AppGallery Connect's app id; the path's `{appId}`).
        public var appID = ""
        /// v2: a file holding the client secret, only the secret.
        public var clientSecretFile = ""
        /// v2: overrides the OAuth token URL (`token_url`).
        public var tokenURL = ""

        public init(api: HMSAPI) { self.api = api }
    }

    /// Web Push: the application server's VAPID identity, and which push services its
    /// subscriptions may name.
    public struct WebPushKeys: Sendable, Equatable {
        /// The VAPID signing key, a PEM P-256 private key (`vapid_key_file`; `pushgate vapid-key`
        /// makes one).
        public var vapidKeyFile = ""
        /// The key itself instead of `vapidKeyFile` (tests; not a config key).
        public var vapidKeyPEM = ""
        /// The VAPID `sub`: a `mailto:` or `https:` contact the push services may use
        /// (`vapid_subject`).
        public var vapidSubject = ""
        /// `allowed_hosts`: the push services subscriptions may name; default the four browsers'.
        public var allowedHosts: WebPushHostPolicy
        /// `max_origins`: push services with a connection pool at once. Default 64.
        public var maxOrigins = 64
        /// `origin_idle_timeout_seconds`: a push service's pool unused this long is closed. Default 300.
        public var originIdleTimeoutSeconds = 300
        /// `allow_private_addresses`: connect to push services whose host resolves to (or is) a
        /// loopback, private, link-local or other non-global address: for mocks and tests. Default
        /// false: such a subscription is REJECTED naming the host and address, as `allowed_hosts`
        /// names hosts and DNS may point any name inside the network.
        public var allowPrivateAddresses = false

        public init(vapidKeyFile: String = "", vapidSubject: String = "", allowedHosts: WebPushHostPolicy) {
            self.vapidKeyFile = vapidKeyFile
            self.vapidSubject = vapidSubject
            self.allowedHosts = allowedHosts
        }
    }

    public var name: String
    public var keys: PlatformKeys
    public var platform: Platform { keys.platform }
    /// Overrides the provider host (Apple's, `https://fcm.googleapis.com`, `https://api.amazon.com`),
    /// e.g. `https://127.0.0.1:8443` for a mock.
    public var url = ""
    /// Extra trusted CA certificates (PEM) for the provider's TLS certificate.
    public var caFile = ""
    /// Trusted CA certificates as PEM instead of `caFile` (the built-in demo app; not a config key).
    public var caPEM = ""
    /// Connections to keep open to the provider. Default 1 (4 for ADM: HTTP/1.1 carries one
    /// request at a time).
    public var connections = 1
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

    public init(name: String, keys: PlatformKeys) {
        self.name = name
        self.keys = keys
    }

    /// An APNs app with `bundleID` as its default topic and no credentials yet.
    public init(name: String, bundleID: String = "") {
        self.init(name: name, keys: .apns(APNsKeys(bundleID: bundleID)))
    }

    /// The APNs default topic; empty for the other platforms (the Registry's `bundle_id`).
    public var bundleID: String {
        if case .apns(let apns) = keys { return apns.bundleID }
        return ""
    }
}
