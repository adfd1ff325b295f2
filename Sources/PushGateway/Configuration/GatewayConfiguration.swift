import PushCore
import PushCredentials
import PushDelivery
import PushTransport
import PushWebPush

/// Everything `pushgate serve` is configured with: the JSON config file, then command-line flags.
///
/// Every key is documented in docs/configuration.md; an unknown key is an error, so a
/// typo does not silently fall back to a default.
public struct GatewayConfiguration: Sendable {
    /// `listen`: where the gRPC API listens, `host:port`. Default `127.0.0.1:50051`.
    public var listenHost = "127.0.0.1"
    public var listenPort = 50051
    /// `loops`: event-loop threads. Default: one per core.
    public var loops = GatewayConfiguration.coreCount
    /// `max_message_bytes`: the largest request message. Default 16 MiB: a Send of
    /// `max_tokens_per_send` (100,000) APNs tokens is about 6.6 MB (66 bytes a token), and of
    /// typical FCM tokens (about 163 characters) about 16.6 MB; 4 MiB held only 63,000 APNs tokens.
    public var maxMessageBytes = 16 << 20
    /// `max_concurrent_streams`: concurrent RPCs per client connection. Default 256.
    public var maxConcurrentStreams = 256
    /// `max_tokens_per_send`: tokens in one Send request, over all its notifications. Default 100,000.
    public var maxTokensPerSend = 100_000
    /// `queue_limit`: notifications one app may hold (queued, retrying, in flight) before Sends get
    /// RESOURCE_EXHAUSTED. Default 1,000,000.
    public var queueLimit = 1_000_000
    /// `store`: where the registry, published messages and fan-out progress live: an SQLite file, or
    /// a PostgreSQL URL (`postgres://…` or `postgresql://…`) that several instances share. Default
    /// `./pushgate.db`.
    public var storePath = "./pushgate.db"
    /// `fanout`: how Publish fan-outs are split into leased chunks and worked (see ``FanOutSettings``).
    public var fanOut = FanOutSettings()
    /// `max_connections`: client connections open at once. Default 10,000.
    public var maxConnections = 10_000
    /// `idle_timeout_seconds`: a client connection with no call for this long is closed (GOAWAY).
    /// Default 300; 0: never.
    public var idleTimeoutSeconds = 300
    /// `request_timeout_seconds`: a unary call's request must be complete this long after it began,
    /// or the call ends with DEADLINE_EXCEEDED (a stalled client holds nothing). Default 30; 0: never.
    public var requestTimeoutSeconds = 30
    /// `max_buffered_request_bytes_per_connection`: request-message bytes one client connection
    /// may have in memory (messages arriving, counted at their declared size, and messages not yet
    /// taken by their handler); a message that does not fit gets RESOURCE_EXHAUSTED. At least
    /// `max_message_bytes`. Default 64 MiB.
    public var maxBufferedRequestBytesPerConnection = 64 << 20
    /// `max_buffered_request_bytes`: the same over all connections together. Default 1 GiB.
    public var maxBufferedRequestBytes = 1 << 30
    /// `max_unsent_response_bytes`: response bytes a client may leave unread before it is sent
    /// GOAWAY and closed (its calls' work goes on without it). Default 64 MiB.
    public var maxUnsentResponseBytes = 64 << 20
    /// `write_timeout_seconds`: a client that has unread responses and takes none of their bytes
    /// for this long is sent GOAWAY and closed likewise. Default 30; 0: never.
    public var writeTimeoutSeconds = 30
    /// `send_timeout_seconds`: the longest a `Send` (or one request of a `SendStream`) runs, even
    /// without a client deadline: what is not delivered by then is FAILED `DeadlineExceeded`.
    /// Default 300; 0: no bound but the client's deadline. SIGHUP applies a new value to new Sends.
    public var sendTimeoutSeconds = 300
    /// `shutdown_timeout_seconds`: on SIGTERM/SIGINT, how long calls in flight may run on. Default 30.
    public var shutdownTimeoutSeconds = 30
    /// `log_tokens`: print whole device tokens in log lines (default false: the first 8 digits and …).
    public var logTokens = false
    /// `log_level`: debug, info, warning or error. Default info.
    public var logLevel = LogLevel.info
    /// `apps`: the apps Pushgate sends for.
    public var apps: [AppConfiguration] = []
    /// `webhooks`: where delivery events are POSTed (docs/webhooks.md). A restart applies changes.
    public var webhooks: [WebhookConfiguration] = []
    /// `delivery_log`: which Publish outcomes are kept for `ListDeliveries`, and how long.
    public var deliveryLog = DeliveryLogSettings()
    /// `metrics_listen`: where `/metrics` and `/healthz` are served over HTTP, `host:port`; nil (the
    /// default, or an empty string) serves no metrics.
    public var metricsListen: (host: String, port: Int)?
    /// `reflection`: serve gRPC server reflection (grpc.reflection.v1 and v1alpha), so that grpcurl
    /// and the like find the API without the .proto files; behind `api_keys` like Push. Default true.
    public var reflection = true
    /// `console`: serve the operator's console (static pages calling the Connect API with the
    /// operator's key) at `/console/` on the API listener (docs/console.md).
    public var console = true
    /// With no apps, start the built-in demo (a mock APNs and an app wired to it). `--no-demo` clears it.
    public var demoWhenNoApps = true
    /// TLS, mTLS, `allow_insecure` and `api_keys` (GatewayConfiguration+Security.swift).
    public var security = SecurityConfiguration()
    /// `sns`: the SNS API's region, account id and credentials (SNSConfiguration.swift).
    public var sns = SNSConfiguration()

    public init() {}

    /// The number of cores this process may use.
    public static var coreCount: Int {
        max(1, systemCoreCount())
    }

    /// Reads a config file's JSON. The keys are the ones above; see docs/configuration.md.
    /// `readingSecrets` false: for the tools beside a gateway (`import`, `export`), which need the
    /// store and the apps, and may run as a user who cannot read the gateway's secret files (the
    /// SNS API's credentials are then left out).
    public static func parse(json bytes: [UInt8], readingSecrets: Bool = true) throws(ConfigurationError)
        -> GatewayConfiguration
    {
        let root: JSONValue
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw ConfigurationError("config: not valid JSON: \(error)")
        }
        var config = GatewayConfiguration()
        let reader = try ConfigObject(root, path: "config")
        try reader.checkKeys(
            Set([
                "listen", "loops", "max_message_bytes", "max_concurrent_streams", "max_tokens_per_send", "queue_limit",
                "store", "log_level", "log_tokens", "apps", "max_connections", "idle_timeout_seconds",
                "request_timeout_seconds", "shutdown_timeout_seconds", "metrics_listen", "fanout",
                "max_buffered_request_bytes_per_connection", "max_buffered_request_bytes", "max_unsent_response_bytes",
                "write_timeout_seconds", "send_timeout_seconds", "reflection", "sns", "webhooks", "delivery_log",
                "console",
            ]).union(SecurityConfiguration.keys))
        if let listen = try reader.string("listen") { try config.setListen(listen) }
        if let loops = try reader.int("loops", range: 1...256) { config.loops = loops }
        if let size = try reader.int("max_message_bytes", range: 1024...(64 << 20)) { config.maxMessageBytes = size }
        if let streams = try reader.int("max_concurrent_streams", range: 1...100_000) {
            config.maxConcurrentStreams = streams
        }
        if let tokens = try reader.int("max_tokens_per_send", range: 1...10_000_000) {
            config.maxTokensPerSend = tokens
        }
        if let limit = try reader.int("queue_limit", range: 1...100_000_000) { config.queueLimit = limit }
        if let path = try reader.string("store") {
            guard !path.isEmpty else { throw ConfigurationError("config.store: must not be empty") }
            config.storePath = path
        }
        if let fanOut = try reader.object("fanout") { config.fanOut = try FanOutSettings.parse(fanOut) }
        if let logTokens = try reader.bool("log_tokens") { config.logTokens = logTokens }
        if let reflection = try reader.bool("reflection") { config.reflection = reflection }
        if let console = try reader.bool("console") { config.console = console }
        if let n = try reader.int("max_connections", range: 1...1_000_000) { config.maxConnections = n }
        if let n = try reader.int("idle_timeout_seconds", range: 0...86_400) { config.idleTimeoutSeconds = n }
        if let n = try reader.int("request_timeout_seconds", range: 0...86_400) { config.requestTimeoutSeconds = n }
        if let n = try reader.int("shutdown_timeout_seconds", range: 0...3600) { config.shutdownTimeoutSeconds = n }
        if let n = try reader.int("max_buffered_request_bytes_per_connection", range: 1024...(1 << 40)) {
            config.maxBufferedRequestBytesPerConnection = n
        }
        if let n = try reader.int("max_buffered_request_bytes", range: 1024...(1 << 40)) {
            config.maxBufferedRequestBytes = n
        }
        if let n = try reader.int("max_unsent_response_bytes", range: 65_536...(1 << 40)) {
            config.maxUnsentResponseBytes = n
        }
        if let n = try reader.int("write_timeout_seconds", range: 0...86_400) { config.writeTimeoutSeconds = n }
        if let n = try reader.int("send_timeout_seconds", range: 0...86_400) { config.sendTimeoutSeconds = n }
        // A message as large as allowed must fit the budgets, or it could never be received.
        if config.maxBufferedRequestBytesPerConnection < config.maxMessageBytes + 5 {
            throw ConfigurationError(
                "config.max_buffered_request_bytes_per_connection: \(config.maxBufferedRequestBytesPerConnection) is less than "
                    + "max_message_bytes (\(config.maxMessageBytes)) plus its 5-byte prefix: such a message could never be received"
            )
        }
        if config.maxBufferedRequestBytes < config.maxBufferedRequestBytesPerConnection {
            throw ConfigurationError(
                "config.max_buffered_request_bytes: \(config.maxBufferedRequestBytes) is less than "
                    + "max_buffered_request_bytes_per_connection (\(config.maxBufferedRequestBytesPerConnection))")
        }
        if let level = try reader.string("log_level") {
            config.logLevel = try LogLevel(parsing: level, path: "config.log_level")
        }
        if let metrics = try reader.string("metrics_listen") { try config.setMetricsListen(metrics) }
        if let apps = try reader.array("apps") {
            config.apps = try apps.enumerated().map { index, value throws(ConfigurationError) in
                try parseApp(value, path: "config.apps[\(index)]")
            }
            var seen = Set<String>()
            for (index, app) in config.apps.enumerated() where !seen.insert(app.name).inserted {
                throw ConfigurationError("config.apps[\(index)].name: duplicate app name \(app.name.debugDescription)")
            }
        }
        if let webhooks = try reader.array("webhooks") {
            config.webhooks = try WebhookConfiguration.parseAll(webhooks, apps: Set(config.apps.map(\.name)))
        }
        if let log = try reader.object("delivery_log") { config.deliveryLog = try DeliveryLogSettings.parse(log) }
        config.security = try SecurityConfiguration.parse(reader)
        if readingSecrets, let sns = try reader.object("sns") {
            config.sns = try SNSConfiguration.parse(sns, references: &config.security.appReferences)
        }
        return config
    }

    /// Descriptors kept for everything but client connections: provider connections (twice each,
    /// as a replaced one may still be closing), listeners, the store, the event loops' own.
    static func reservedDescriptors(providerConnections: Int) -> Int {
        64 + 2 * providerConnections
    }

    /// The client connections that fit under a descriptor limit of `limit` with the rest kept for
    /// providers and the process: `maxConnections`, or fewer when the limit is lower.
    public func clientConnectionsAllowed(descriptorLimit limit: Int) -> Int {
        let providers = apps.reduce(0) { $0 + $1.connections }
        let room = limit - Self.reservedDescriptors(providerConnections: providers)
        return max(1, min(maxConnections, room))
    }

    /// Sets `listen` from `host:port` (`[::1]:50051` for IPv6).
    public mutating func setListen(_ value: String) throws(ConfigurationError) {
        guard let (host, port) = parseHostPort(value) else {
            throw ConfigurationError("listen: expected host:port (e.g. 127.0.0.1:50051), got \(value.debugDescription)")
        }
        listenHost = host
        listenPort = port
    }

    /// Sets `metrics_listen` from `host:port`; empty turns metrics off.
    public mutating func setMetricsListen(_ value: String) throws(ConfigurationError) {
        guard !value.isEmpty else {
            metricsListen = nil
            return
        }
        guard let (host, port) = parseHostPort(value) else {
            throw ConfigurationError(
                "metrics_listen: expected host:port (e.g. 127.0.0.1:9464), got \(value.debugDescription)")
        }
        metricsListen = (host, port)
    }

    /// The app a notification names; empty means the only (or first) app.
    public func app(named name: String) -> AppConfiguration? {
        Self.app(named: name, in: apps, name: \.name)
    }

    /// The one rule for finding an app by the name a request gives, over any list of apps in the
    /// configuration's order (``AppRoutes`` keeps its own): empty names the first app.
    static func app<App>(named name: String, in apps: [App], name key: (App) -> String) -> App? {
        // A handful of apps: comparing names beats hashing one.
        name.isEmpty ? apps.first : apps.first { key($0) == name }
    }

    private static func parseApp(_ value: JSONValue, path: String) throws(ConfigurationError) -> AppConfiguration {
        let reader = try ConfigObject(value, path: path)
        let platformName = try reader.string("platform") ?? "apns"
        guard let platform = AppConfiguration.Platform(rawValue: platformName) else {
            throw ConfigurationError(
                "\(path).platform: unknown platform \(platformName.debugDescription) (supported: apns, fcm, adm, webpush, hms)"
            )
        }
        let common = [
            "name", "platform", "url", "ca_file", "connections", "connect_timeout_seconds", "ping_interval_seconds",
            "ping_timeout_seconds", "stall_timeout_seconds", "http_version", "proxy",
        ]
        switch platform {
        case .apns:
            try reader.checkKeys(
                Set(
                    common + [
                        "team_id", "key_id", "key_file", "cert_file", "bundle_id", "sandbox", "channels_url",
                        "allow_expired_certificate",
                    ]),
                context: "an apns app")
        case .fcm:
            try reader.checkKeys(
                Set(common + ["service_account_file", "project_id", "token_url"]), context: "an fcm app")
        case .adm:
            try reader.checkKeys(Set(common + ["client_id", "client_secret_file", "token_url"]), context: "an adm app")
        case .hms:
            try reader.checkKeys(
                Set(common + ["api", "service_account_file", "app_id", "client_secret_file", "token_url"]),
                context: "an hms app")
        case .webpush:
            // No `url`: every subscription names its own push service.
            try reader.checkKeys(
                Set(common.filter { $0 != "url" }).union([
                    "vapid_key_file", "vapid_subject", "allowed_hosts", "max_origins", "origin_idle_timeout_seconds",
                    "allow_private_addresses",
                ]), context: "a webpush app")
        }
        guard let name = try reader.string("name"), !name.isEmpty else {
            throw ConfigurationError("\(path).name: required")
        }
        // The name is a component of the app's SNS ARNs (`…:app/APNS/{name}`, `…:endpoint/APNS/{name}/{id}`);
        // a user publish stores its apps' names joined by newlines.
        guard !name.contains("/"), !name.contains(":") else {
            throw ConfigurationError(
                "\(path).name: \(TextCap.quoted(name)) must not contain / or : (it is part of the app's SNS ARNs)")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ConfigurationError("\(path).name: \(TextCap.quoted(name)) must not contain control characters")
        }
        var app = AppConfiguration(name: name, keys: try parseKeys(reader, platform: platform, path: path))
        app.url = try reader.string("url") ?? ""
        app.caFile = try reader.string("ca_file") ?? ""
        // ADM speaks HTTP/1.1: one request in flight per connection, so its default is 4 of them.
        // Huawei's clients all speak HTTP/1.1 (whether push-api offers HTTP/2 is unverified): the same.
        app.connections = try reader.int("connections", range: 1...64) ?? (platform == .adm || platform == .hms ? 4 : 1)
        app.connectTimeoutSeconds = try reader.int("connect_timeout_seconds", range: 1...600) ?? 10
        app.pingIntervalSeconds = try reader.int("ping_interval_seconds", range: 1...3600) ?? 60
        app.pingTimeoutSeconds = try reader.int("ping_timeout_seconds", range: 1...600) ?? 10
        app.stallTimeoutSeconds = try reader.int("stall_timeout_seconds", range: 1...3600) ?? 30
        app.proxy = try reader.string("proxy") ?? ""
        if !app.proxy.isEmpty && app.proxy != "direct" {
            do {
                _ = try HTTPProxy(url: app.proxy)
            } catch {
                throw ConfigurationError("\(path).proxy: \(error.description)")
            }
        }
        if let version = try reader.string("http_version") {
            guard let parsed = HTTPVersionPolicy(rawValue: version) else {
                throw ConfigurationError(
                    "\(path).http_version: \(version.debugDescription) is not one of \"auto\", \"2\", \"1.1\"")
            }
            guard platform != .apns || parsed == .http2 else {
                throw ConfigurationError(
                    "\(path).http_version: APNs speaks only HTTP/2 (Apple requires it); leave it out or set \"2\"")
            }
            app.httpVersion = parsed
        } else {
            app.httpVersion = platform == .apns ? .http2 : .auto
        }
        return app
    }

    /// The keys of the app's own platform (``checkKeys`` already refused the others').
    private static func parseKeys(
        _ reader: ConfigObject, platform: AppConfiguration.Platform, path: String
    ) throws(ConfigurationError) -> AppConfiguration.PlatformKeys {
        switch platform {
        case .apns:
            var apns = AppConfiguration.APNsKeys(bundleID: try reader.string("bundle_id") ?? "")
            apns.teamID = try reader.string("team_id") ?? ""
            apns.keyID = try reader.string("key_id") ?? ""
            apns.keyFile = try reader.string("key_file") ?? ""
            apns.certFile = try reader.string("cert_file") ?? ""
            apns.sandbox = try reader.bool("sandbox") ?? false
            apns.allowExpiredCertificate = try reader.bool("allow_expired_certificate") ?? false
            apns.channelsURL = try reader.string("channels_url") ?? ""
            return .apns(apns)
        case .fcm:
            var fcm = AppConfiguration.FCMKeys(serviceAccountFile: try reader.string("service_account_file") ?? "")
            guard !fcm.serviceAccountFile.isEmpty else {
                throw ConfigurationError(
                    "\(path).service_account_file: required for an fcm app (a Google service-account JSON key)")
            }
            fcm.projectID = try reader.string("project_id") ?? ""
            fcm.tokenURL = try reader.string("token_url") ?? ""
            return .fcm(fcm)
        case .adm:
            var adm = AppConfiguration.ADMKeys(
                clientID: try reader.string("client_id") ?? "",
                clientSecretFile: try reader.string("client_secret_file") ?? "")
            guard !adm.clientID.isEmpty else {
                throw ConfigurationError(
                    "\(path).client_id: required for an adm app (the security profile's client id)")
            }
            guard !adm.clientSecretFile.isEmpty else {
                throw ConfigurationError(
                    "\(path).client_secret_file: required for an adm app (a file holding the client secret)")
            }
            adm.tokenURL = try reader.string("token_url") ?? ""
            return .adm(adm)
        case .hms:
            return .hms(try parseHMSKeys(reader, path: path))
        case .webpush:
            return .webpush(try parseWebPushKeys(reader, path: path))
        }
    }

    private static func parseHMSKeys(_ reader: ConfigObject, path: String) throws(ConfigurationError)
        -> AppConfiguration.HMSKeys
    {
        guard let apiName = try reader.string("api") else {
            throw ConfigurationError(
                "\(path).api: required for an hms app: \"v3\" (HarmonyOS NEXT) or \"v2\" (HMS Core, HarmonyOS 4 and earlier)"
            )
        }
        guard let api = HMSAPI(rawValue: apiName) else {
            throw ConfigurationError("\(path).api: \(apiName.debugDescription) is not \"v3\" or \"v2\"")
        }
        var keys = AppConfiguration.HMSKeys(api: api)
        keys.serviceAccountFile = try reader.string("service_account_file") ?? ""
        keys.appID = try reader.string("app_id") ?? ""
        keys.clientSecretFile = try reader.string("client_secret_file") ?? ""
        keys.tokenURL = try reader.string("token_url") ?? ""
        switch api {
        case .v3:
            guard !keys.serviceAccountFile.isEmpty else {
                throw ConfigurationError(
                    "\(path).service_account_file: required for an hms v3 app (the service-account key JSON from "
                        + "Huawei's API Console)")
            }
            for (field, value) in [
                ("app_id", keys.appID), ("client_secret_file", keys.clientSecretFile),
                ("token_url", keys.tokenURL),
            ] where !value.isEmpty {
                throw ConfigurationError("\(path).\(field): is for api \"v2\"; a v3 app signs its own JWTs")
            }
        case .v2:
            guard !keys.appID.isEmpty else {
                throw ConfigurationError("\(path).app_id: required for an hms v2 app (its OAuth client id, the app id)")
            }
            guard keys.appID.utf8.allSatisfy({ (0x30...0x39).contains($0) }), keys.appID.utf8.count <= 64 else {
                throw ConfigurationError("\(path).app_id: must be the app id's digits (it goes in the request path)")
            }
            guard !keys.clientSecretFile.isEmpty else {
                throw ConfigurationError(
                    "\(path).client_secret_file: required for an hms v2 app (a file holding the client secret)")
            }
            guard keys.serviceAccountFile.isEmpty else {
                throw ConfigurationError("\(path).service_account_file: is for api \"v3\"")
            }
        }
        return keys
    }

    private static func parseWebPushKeys(
        _ reader: ConfigObject, path: String
    ) throws(ConfigurationError) -> AppConfiguration.WebPushKeys {
        let hosts: WebPushHostPolicy
        do {
            hosts = try WebPushHostPolicy(try reader.strings("allowed_hosts") ?? WebPushHostPolicy.defaultHosts)
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError("\(path).\(error)")
        }
        var keys = AppConfiguration.WebPushKeys(
            vapidKeyFile: try reader.string("vapid_key_file") ?? "",
            vapidSubject: try reader.string("vapid_subject") ?? "",
            allowedHosts: hosts)
        guard !keys.vapidKeyFile.isEmpty else {
            throw ConfigurationError(
                "\(path).vapid_key_file: required for a webpush app (a PEM P-256 private key; `pushgate vapid-key` "
                    + "makes one)")
        }
        guard VAPIDToken.isValidSubject(keys.vapidSubject) else {
            throw ConfigurationError(
                "\(path).vapid_subject: required for a webpush app: a mailto: or https: contact for the push services "
                    + "(e.g. \"mailto:push@example.com\"), got \(keys.vapidSubject.debugDescription)")
        }
        keys.maxOrigins = try reader.int("max_origins", range: 1...4096) ?? 64
        keys.originIdleTimeoutSeconds = try reader.int("origin_idle_timeout_seconds", range: 10...86400) ?? 300
        keys.allowPrivateAddresses = try reader.bool("allow_private_addresses") ?? false
        return keys
    }
}

/// A config file or flag that cannot be used; the message names the key.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// `host:port`, with `[v6]:port` for IPv6 literals.
func parseHostPort(_ value: String) -> (String, Int)? {
    guard let colon = value.lastIndex(of: ":") else { return nil }
    var host = String(value[..<colon])
    guard let port = Int(value[value.index(after: colon)...]), (0...65535).contains(port), !host.isEmpty else {
        return nil
    }
    if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    return (host, port)
}
