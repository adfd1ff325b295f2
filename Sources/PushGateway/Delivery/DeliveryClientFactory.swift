import PushADM
import PushAPNs
import PushCore
import PushCredentials
import PushDelivery
import PushFCM
import PushHMS
import PushMetrics
import PushPosix
import PushTLS
import PushTransport
import PushWebPush

#if canImport(Glibc)
    import Glibc
#endif

/// Builds a delivery client per configured app: APNs (endpoint, TLS identity, one provider-token
/// cache per (team, key) shared by every app that uses that key), FCM (service account, OAuth2
/// access-token cache, project), ADM (client credentials, access-token cache) or Web Push (VAPID
/// key, allowed push services, a pool per push service).
enum DeliveryClientFactory {
    static func makeClients(
        _ configuration: GatewayConfiguration, group: EventLoopGroup, log: Log, metrics: GatewayMetrics? = nil
    ) throws(ConfigurationError) -> [String: any DeliveryClient] {
        var tokenCaches: [String: SharedProviderToken] = [:]
        var clients: [String: any DeliveryClient] = [:]
        for (index, app) in configuration.apps.enumerated() {
            let path = "config.apps[\(index)]"
            var settings = ProviderClientConfiguration()
            settings.connections = app.connections
            settings.connectTimeout = .seconds(app.connectTimeoutSeconds)
            settings.pingInterval = .seconds(app.pingIntervalSeconds)
            settings.pingTimeout = .seconds(app.pingTimeoutSeconds)
            settings.stallTimeout = .seconds(app.stallTimeoutSeconds)
            settings.httpVersion = app.httpVersion
            settings.proxy = try proxyChoice(app.proxy, path: path)
            settings.queueLimit = configuration.queueLimit
            let name = app.name
            let logger = providerLogger(log, app: name)
            let recipe = ClientRecipe(
                app: app, path: path, settings: settings, group: group, log: log, logger: logger,
                metrics: metrics?.provider(app: name) ?? ProviderMetrics())
            switch app.keys {
            case .apns(let apns): clients[app.name] = try makeAPNsClient(recipe, apns, tokenCaches: &tokenCaches)
            case .fcm(let fcm): clients[app.name] = try makeFCMClient(recipe, fcm)
            case .adm(let adm): clients[app.name] = try makeADMClient(recipe, adm)
            case .webpush(let web): clients[app.name] = try makeWebPushClient(recipe, web)
            case .hms(let hms): clients[app.name] = try makeHMSClient(recipe, hms)
            }
        }
        return clients
    }

    /// One provider-token cache per (team, key), shared by every app that uses that key: APNs
    /// refuses tokens renewed more often than every 20 minutes (docs/providers.md A.7).
    private static func makeAPNsClient(
        _ recipe: ClientRecipe, _ apns: AppConfiguration.APNsKeys, tokenCaches: inout [String: SharedProviderToken]
    ) throws(ConfigurationError) -> any DeliveryClient {
        let (app, path) = (recipe.app, recipe.path)
        let endpoint = try recipe.endpoint(default: apns.sandbox ? .apnsSandbox : .apnsProduction)
        let credentials: APNsCredentials
        let tls: TLSContext
        do {
            if !apns.certFile.isEmpty {
                tls = try apnsTLS(app, apns)
                if let certificate = tls.clientCertificate {
                    try CertificateExpiry.check(
                        certificate, app: app, path: path, allowExpired: apns.allowExpiredCertificate, log: recipe.log)
                }
                credentials = .certificate
            } else {
                guard !apns.teamID.isEmpty, !apns.keyID.isEmpty, !apns.keyFile.isEmpty || !apns.keyPEM.isEmpty else {
                    throw ConfigurationError(
                        "\(path): set team_id, key_id and key_file (token auth) or cert_file and key_file "
                            + "(certificate auth)")
                }
                tls = try apnsTLS(app, apns)
                let cacheKey = "\(apns.teamID)/\(apns.keyID)"
                let signer = try ES256Signer(
                    p8PEM: apns.keyPEM.isEmpty ? readKeyFile(apns.keyFile, path: path) : apns.keyPEM)
                let publicKey = try signer.publicPoint()
                if let shared = tokenCaches[cacheKey] {
                    // One key id is one key at Apple: apps that share it share their tokens. Two
                    // keys under one id would sign every token of one app with the other's key,
                    // and APNs would answer InvalidProviderToken to all of them.
                    guard shared.publicKey == publicKey else {
                        throw ConfigurationError(
                            "\(path): key_id \(apns.keyID) of team \(apns.teamID) is also \(shared.path)'s, with "
                                + "another key: one key id is one key (check key_id and key_file)")
                    }
                    credentials = .providerToken(shared.cache)
                } else {
                    let cache = ProviderTokenCache(
                        teamID: apns.teamID, keyID: apns.keyID, signer: signer, clock: unixSeconds)
                    tokenCaches[cacheKey] = SharedProviderToken(cache: cache, publicKey: publicKey, path: path)
                    credentials = .providerToken(cache)
                }
            }
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError("\(path): \(error)")
        }
        return recipe.client(APNsDialect(credentials: credentials, authority: endpoint.authority), endpoint, tls)
    }

    /// A provider-token cache shared by the APNs apps of one team and key id: whose it was first,
    /// and the public half of its key (the next app's key must be the same).
    struct SharedProviderToken {
        let cache: ProviderTokenCache
        let publicKey: [UInt8]
        let path: String
    }

    /// An APNs app's TLS context: its `ca_file` (or the demo's CA) trusted, and with certificate
    /// auth its certificate as the client identity.
    private static func apnsTLS(_ app: AppConfiguration, _ apns: AppConfiguration.APNsKeys) throws -> TLSContext {
        if !apns.certFile.isEmpty {
            return try TLSContext.client(
                caFile: app.caFile.isEmpty ? nil : app.caFile, certificateChainFile: apns.certFile,
                privateKeyFile: apns.keyFile.isEmpty ? apns.certFile : apns.keyFile)
        }
        return try app.caPEM.isEmpty
            ? TLSContext.client(caFile: app.caFile.isEmpty ? nil : app.caFile) : TLSContext.client(caPEM: app.caPEM)
    }

    /// The client of an APNs app's channel management API (Apple's `api-manage-broadcast` host, or
    /// `channels_url`): the same engine and the same credentials as `push`, the app's push client
    /// (its provider-token cache itself, so pushes, broadcasts and channel requests share one
    /// token), on a pool of its own (one connection: channel requests are few).
    static func makeChannelClient(
        _ app: AppConfiguration, push: APNsClient, group: EventLoopGroup, log: Log, metrics: GatewayMetrics?
    ) throws(ConfigurationError) -> APNsClient {
        guard case .apns(let apns) = app.keys else {
            throw ConfigurationError("app \(app.name) is not an APNs app")
        }
        let name = app.name
        var settings = ProviderClientConfiguration()
        settings.connections = 1
        settings.connectTimeout = .seconds(app.connectTimeoutSeconds)
        settings.pingInterval = .seconds(app.pingIntervalSeconds)
        settings.pingTimeout = .seconds(app.pingTimeoutSeconds)
        settings.stallTimeout = .seconds(app.stallTimeoutSeconds)
        settings.proxy = push.configuration.proxy
        let endpoint: HTTPSOrigin
        if apns.channelsURL.isEmpty {
            endpoint = apns.sandbox ? .apnsChannelsSandbox : .apnsChannelsProduction
        } else if let override = HTTPSOrigin(url: apns.channelsURL) {
            endpoint = override
        } else {
            throw ConfigurationError(
                "app \(name).channels_url: expected https://host[:port], got \(apns.channelsURL.debugDescription)")
        }
        let tls: TLSContext
        do {
            tls = try apnsTLS(app, apns)
        } catch {
            throw ConfigurationError("app \(name): \(error)")
        }
        return ProviderClient(
            name: name, endpoint: endpoint,
            dialect: APNsDialect(
                credentials: push.dialect.credentials(), authority: endpoint.authority, api: .channelManagement),
            tlsContext: tls, configuration: settings, group: group,
            logger: providerLogger(log, app: name, api: "channels"),
            metrics: metrics?.provider(app: name) ?? ProviderMetrics())
    }

    /// An app's provider log: warnings, but a refused handshake (``ProviderRefusedHandshake``) is
    /// an error naming the client certificate: nothing goes out for the app until someone acts.
    /// `api` is said only for a client other than the app's push client (`channels`).
    static func providerLogger(_ log: Log, app: String, api: String? = nil) -> @Sendable (String, (any Error)?) -> Void
    {
        { message, error in
            let text = error.map { "\($0)" } ?? ""
            guard let refused = error as? ProviderRefusedHandshake else {
                if let api {
                    log.warning(message, ["app": app, "api": api, "error": text])
                } else {
                    log.warning(message, ["app": app, "error": text])
                }
                return
            }
            log.error(
                message,
                [
                    "app": app, "api": api ?? "push", "error": text, "alert": refused.alert,
                    "certificate_subject": refused.certificate?.subject ?? "",
                    "certificate_expiry": refused.certificate?.expiry ?? "",
                ])
        }
    }

    private static func readKeyFile(_ file: String, path: String) throws(ConfigurationError) -> String {
        do {
            return try FileContents.readText(file)
        } catch {
            throw ConfigurationError("\(path): the .p8 key file: \(error.description)")
        }
    }

    private static func makeADMClient(
        _ recipe: ClientRecipe, _ adm: AppConfiguration.ADMKeys
    ) throws(ConfigurationError) -> any DeliveryClient {
        let path = recipe.path
        let endpoint = try recipe.endpoint(default: .admProduction)
        let tls = try recipe.accessTokenTLS()
        let secret: String
        do {
            secret = try SecretFile.read(adm.clientSecretFile)
        } catch {
            throw ConfigurationError("\(path).client_secret_file: \(error)")
        }
        guard !secret.isEmpty else {
            throw ConfigurationError("\(path).client_secret_file: \(adm.clientSecretFile) is empty")
        }
        let tokenURL = adm.tokenURL.isEmpty ? AmazonOAuth.defaultTokenURL : adm.tokenURL
        let fetch: AccessTokenCache.Fetch
        do {
            fetch = try AmazonOAuth.fetch(
                clientID: adm.clientID, clientSecret: secret, tokenURL: tokenURL, tlsContext: tls,
                loop: recipe.tokenLoop, proxy: recipe.settings.proxy)
        } catch {
            throw ConfigurationError("\(path).token_url: \(error)")
        }
        let accessTokens = AccessTokenCache(logger: recipe.logger, fetch: fetch)
        return recipe.client(ADMDialect(authority: endpoint.authority, accessTokens: accessTokens), endpoint, tls)
    }

    /// Huawei Push Kit: v3 signs its JWTs locally with the service account's key (one per hour,
    /// reused by every request); v2 fetches OAuth access tokens with the app's client credentials.
    private static func makeHMSClient(
        _ recipe: ClientRecipe, _ hms: AppConfiguration.HMSKeys
    ) throws(ConfigurationError) -> any DeliveryClient {
        let path = recipe.path
        let endpoint = try recipe.endpoint(default: .hmsProduction)
        let tls = try recipe.accessTokenTLS()
        let fetch: AccessTokenCache.Fetch
        let target: String
        switch hms.api {
        case .v3:
            do {
                let account = try HuaweiServiceAccount(file: hms.serviceAccountFile)
                fetch = HuaweiJWT.fetch(account: account, signer: try account.signer())
                target = account.projectID
            } catch {
                throw ConfigurationError("\(path).service_account_file: \(error.message)")
            }
        case .v2:
            let secret: String
            do {
                secret = try SecretFile.read(hms.clientSecretFile)
            } catch {
                throw ConfigurationError("\(path).client_secret_file: \(error)")
            }
            guard !secret.isEmpty else {
                throw ConfigurationError("\(path).client_secret_file: \(hms.clientSecretFile) is empty")
            }
            do {
                fetch = try HuaweiOAuth.fetch(
                    clientID: hms.appID, clientSecret: secret,
                    tokenURL: hms.tokenURL.isEmpty ? HuaweiOAuth.defaultTokenURL : hms.tokenURL, tlsContext: tls,
                    loop: recipe.tokenLoop, proxy: recipe.settings.proxy)
            } catch {
                throw ConfigurationError("\(path).token_url: \(error)")
            }
            target = hms.appID
        }
        let accessTokens = AccessTokenCache(logger: recipe.logger, fetch: fetch)
        let dialect = HMSDialect(
            api: hms.api, target: target, authority: endpoint.authority, accessTokens: accessTokens)
        return recipe.client(dialect, endpoint, tls)
    }

    /// Web Push: the VAPID key signs one token per push service origin; the subscriptions name the
    /// origins, so the engine opens a pool for each (at most `max_origins`).
    private static func makeWebPushClient(
        _ recipe: ClientRecipe, _ web: AppConfiguration.WebPushKeys
    ) throws(ConfigurationError) -> any DeliveryClient {
        let path = recipe.path
        let vapid: VAPIDTokenCache
        do {
            let pem = web.vapidKeyPEM.isEmpty ? try FileContents.readText(web.vapidKeyFile) : web.vapidKeyPEM
            vapid = try VAPIDTokenCache(signer: ES256Signer(p8PEM: pem), subject: web.vapidSubject, clock: unixSeconds)
        } catch {
            throw ConfigurationError("\(path).vapid_key_file: \(error)")
        }
        var recipe = recipe
        recipe.settings.maxOrigins = web.maxOrigins
        recipe.settings.originIdleTimeout = .seconds(web.originIdleTimeoutSeconds)
        recipe.settings.admission = web.allowPrivateAddresses ? .any : .globalOnly
        return recipe.client(
            WebPushDialect(vapid: vapid, hosts: web.allowedHosts), .webPushHome, try recipe.accessTokenTLS())
    }

    /// The app's `proxy`, or the environment's (`HTTPS_PROXY`, `NO_PROXY`) when it names none.
    /// An app's or webhook's `proxy`: a URL, `direct`, or empty for `HTTPS_PROXY` and `NO_PROXY`.
    static func proxyChoice(_ proxy: String, path: String) throws(ConfigurationError) -> ProxyChoice {
        do {
            switch proxy {
            case "direct": return .direct
            case "":
                return try ProxyChoice.fromEnvironment(
                    environment(["HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"]))
            default: return ProxyChoice(proxy: try HTTPProxy(url: proxy))
            }
        } catch {
            throw ConfigurationError("\(path).proxy: \(error.description)")
        }
    }

    private static func environment(_ names: [String]) -> [String: String] {
        var values: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }

    private static func isProjectIDByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "-")
    }

    private static func makeFCMClient(
        _ recipe: ClientRecipe, _ fcm: AppConfiguration.FCMKeys
    ) throws(ConfigurationError) -> any DeliveryClient {
        let path = recipe.path
        let endpoint = try recipe.endpoint(default: .fcmProduction)
        let tls = try recipe.accessTokenTLS()
        let account: GoogleServiceAccount
        let signer: RSASigner
        do {
            account = try GoogleServiceAccount(file: fcm.serviceAccountFile)
            signer = try RSASigner(scheme: .rs256, pem: account.privateKey)
        } catch {
            throw ConfigurationError("\(path).service_account_file: \(error)")
        }
        let projectID = fcm.projectID.isEmpty ? account.projectID : fcm.projectID
        guard !projectID.isEmpty else {
            throw ConfigurationError("\(path).project_id: required (the service account file has no project_id)")
        }
        // Firebase project ids are lowercase letters, digits and hyphens; it goes into the :path.
        guard projectID.utf8.allSatisfy({ isProjectIDByte($0) }) else {
            throw ConfigurationError("\(path).project_id: \(projectID.debugDescription) is not a Firebase project id")
        }
        let tokenURL = fcm.tokenURL.isEmpty ? account.tokenURI : fcm.tokenURL
        let fetch: AccessTokenCache.Fetch
        do {
            fetch = try GoogleOAuth.fetch(
                account: account, signer: signer, tokenURL: tokenURL, tlsContext: tls, loop: recipe.tokenLoop,
                proxy: recipe.settings.proxy)
        } catch {
            throw ConfigurationError(
                "\(fcm.tokenURL.isEmpty ? "\(path).service_account_file token_uri" : "\(path).token_url"): \(error)")
        }
        let accessTokens = AccessTokenCache(logger: recipe.logger, fetch: fetch)
        return recipe.client(
            FCMDialect(projectID: projectID, authority: endpoint.authority, accessTokens: accessTokens), endpoint, tls)
    }
}

/// What every app's client is made with besides its platform's keys: the app, where its config
/// is (for errors), the engine's settings, the loops, its log and its metrics.
private struct ClientRecipe {
    let app: AppConfiguration
    let path: String
    var settings: ProviderClientConfiguration
    let group: EventLoopGroup
    let log: Log
    let logger: @Sendable (String, (any Error)?) -> Void
    let metrics: ProviderMetrics

    /// The app's `url`, or the provider's own host.
    func endpoint(default endpoint: HTTPSOrigin) throws(ConfigurationError) -> HTTPSOrigin {
        guard !app.url.isEmpty else { return endpoint }
        guard let override = HTTPSOrigin(url: app.url) else {
            throw ConfigurationError("\(path).url: expected https://host[:port], got \(app.url.debugDescription)")
        }
        return override
    }

    /// Where OAuth2 token fetches run.
    var tokenLoop: EventLoop { group.loops[0] }

    /// The TLS context of a provider behind OAuth2 access tokens (FCM, ADM) or of the push
    /// services (Web Push): the app's HTTP versions
    /// offered by ALPN, its `ca_file` trusted; the same context reaches the token endpoint.
    func accessTokenTLS() throws(ConfigurationError) -> TLSContext {
        do {
            return try TLSContext.client(alpn: app.httpVersion.alpn, caFile: app.caFile.isEmpty ? nil : app.caFile)
        } catch {
            throw ConfigurationError("\(path).ca_file: \(error)")
        }
    }

    /// The engine's client speaking `dialect` to `endpoint`.
    func client<Dialect: ProviderDialect>(
        _ dialect: Dialect, _ endpoint: HTTPSOrigin, _ tls: TLSContext
    ) -> ProviderClient<Dialect> {
        ProviderClient(
            name: app.name, endpoint: endpoint, dialect: dialect, tlsContext: tls, configuration: settings,
            group: group, logger: logger, metrics: metrics)
    }
}
