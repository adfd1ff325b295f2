import PushAPNs
import PushDelivery
import PushPosix
import PushTLS

/// Builds an ``APNsClient`` per configured app: endpoint, TLS identity, one provider-token cache
/// per (team, key) shared by every app that uses that key.
enum APNsClientFactory {
    static func makeClients(
        _ configuration: GatewayConfiguration, group: EventLoopGroup, log: Log, metrics: GatewayMetrics? = nil
    ) throws(ConfigurationError) -> [String: any DeliveryClient] {
        var tokenCaches: [String: ProviderTokenCache] = [:]
        var clients: [String: any DeliveryClient] = [:]
        for (index, app) in configuration.apps.enumerated() {
            let path = "config.apps[\(index)]"
            let endpoint = try endpoint(for: app, path: path)
            let credentials: APNsCredentials
            let tls: TLSContext
            do {
                if !app.certFile.isEmpty {
                    tls = try TLSContext.client(
                        caFile: app.caFile.isEmpty ? nil : app.caFile, certificateChainFile: app.certFile,
                        privateKeyFile: app.keyFile.isEmpty ? app.certFile : app.keyFile)
                    credentials = .certificate
                } else {
                    guard !app.teamID.isEmpty, !app.keyID.isEmpty, !app.keyFile.isEmpty || !app.keyPEM.isEmpty else {
                        throw ConfigurationError(
                            "\(path): set team_id, key_id and key_file (token auth) or cert_file and key_file "
                                + "(certificate auth)")
                    }
                    tls = try app.caPEM.isEmpty
                        ? TLSContext.client(caFile: app.caFile.isEmpty ? nil : app.caFile)
                        : TLSContext.client(caPEM: app.caPEM)
                    let cacheKey = "\(app.teamID)/\(app.keyID)"
                    if let cache = tokenCaches[cacheKey] {
                        credentials = .providerToken(cache)
                    } else {
                        let signer = try app.keyPEM.isEmpty
                            ? ES256Signer(p8File: app.keyFile) : ES256Signer(p8PEM: app.keyPEM)
                        let cache = ProviderTokenCache(
                            teamID: app.teamID, keyID: app.keyID, signer: signer, clock: unixSeconds)
                        tokenCaches[cacheKey] = cache
                        credentials = .providerToken(cache)
                    }
                }
            } catch let error as ConfigurationError {
                throw error
            } catch {
                throw ConfigurationError("\(path): \(error)")
            }
            var apns = ProviderClientConfiguration()
            apns.connections = app.connections
            apns.queueLimit = configuration.queueLimit
            let name = app.name
            clients[app.name] = APNsClient(
                name: app.name, endpoint: endpoint, credentials: credentials, tlsContext: tls, configuration: apns,
                group: group,
                logger: { message, error in
                    log.warning(message, ["app": name, "error": error.map { "\($0)" } ?? ""])
                },
                requestSeconds: metrics?.providerRequestSeconds(app: name))
        }
        return clients
    }

    private static func endpoint(for app: AppConfiguration, path: String) throws(ConfigurationError) -> ProviderEndpoint {
        if app.url.isEmpty { return app.sandbox ? .apnsSandbox : .apnsProduction }
        guard let endpoint = ProviderEndpoint(url: app.url) else {
            throw ConfigurationError("\(path).url: expected https://host[:port], got \(app.url.debugDescription)")
        }
        return endpoint
    }
}
