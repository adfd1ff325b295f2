import PushAPNs
import PushDelivery
import PushPosix
import PushTLS

extension Gateway {
    /// Applies a new configuration's apps and API keys without dropping any connection (SIGHUP).
    ///
    /// Apps whose settings did not change keep their APNs client and its connections; new or changed
    /// apps get a new client; removed or replaced clients finish what they hold and close a minute
    /// later. Keys that only take effect at start (listener, TLS, loops, store, limits, timeouts,
    /// logging, metrics) keep their running values, and a change to them is logged as needing a
    /// restart. A configuration that does not check out is refused whole; the running one stays.
    /// - Returns: whether the new configuration was applied.
    @discardableResult
    public func reload(_ requested: GatewayConfiguration) async -> Bool {
        let old = live.snapshot
        var next = old.configuration
        next.apps = requested.apps.isEmpty && demoApp != nil ? [demoApp!] : requested.apps
        next.security.apiKeys = requested.security.apiKeys
        next.security.appReferences = requested.security.appReferences
        next.sns = requested.sns
        next.shutdownTimeoutSeconds = requested.shutdownTimeoutSeconds
        let needsRestart = Self.restartOnlyChanges(from: old.configuration, to: requested)
        if !needsRestart.isEmpty {
            log.warning(
                "reload: these keys need a restart and keep their running values",
                ["keys": needsRestart.joined(separator: ",")])
        }
        var clients: [String: any DeliveryClient] = [:]
        var fresh: [AppConfiguration] = []
        for app in next.apps {
            if old.configuration.apps.contains(app), let client = old.clients[app.name],
                !Self.certificateFileChanged(app, running: client)
            {
                clients[app.name] = client
                if case .apns(let apns) = app.keys, !apns.certFile.isEmpty {
                    // Kept running: its certificate is judged again (warnings only).
                    CertificateExpiry.warn(file: apns.certFile, app: app, log: log)
                }
            } else {
                fresh.append(app)
            }
        }
        do {
            try next.security.check(
                listenHost: next.listenHost, listenPort: next.listenPort, appNames: next.apps.map(\.name))
            var subset = next
            subset.apps = fresh
            let made = try DeliveryClientFactory.makeClients(subset, group: group, log: log, metrics: metrics)
            clients.merge(made) { _, new in new }
        } catch {
            log.error("reload refused; the running configuration stays", ["error": "\(error)"])
            return false
        }
        metrics.add(apps: fresh)
        _ = live.replace(LiveSettings.Snapshot(configuration: next, clients: clients, metrics: metrics))
        authorizer.replace(next.security.apiKeys)
        let kept = Set(clients.values.map(ObjectIdentifier.init))
        let retired = old.clients.values.filter { !kept.contains(ObjectIdentifier($0)) }
        if !retired.isEmpty {
            // Requests already handed to them finish; then their connections close.
            Task {
                try? await Task.sleep(for: .seconds(60))
                for client in retired { client.shutdown() }
            }
        }
        let removed = old.configuration.apps.map(\.name).filter { name in !next.apps.contains { $0.name == name } }
        log.info(
            "configuration reloaded",
            [
                "apps": next.apps.map(\.name).joined(separator: ","),
                "new_or_changed": fresh.map(\.name).joined(separator: ","),
                "removed": removed.joined(separator: ","), "api_keys": "\(next.security.apiKeys.keys.count)",
                "sns_credentials": "\(next.sns.credentials.count)",
            ])
        return true
    }

    /// Whether an APNs app's `cert_file` now holds another certificate than its running client
    /// presents (renewed in place): the app then gets a new client, so a SIGHUP is all a renewal
    /// of a refused certificate takes. A file that cannot be read keeps the running client (the
    /// new client's load would report it).
    static func certificateFileChanged(_ app: AppConfiguration, running client: any DeliveryClient) -> Bool {
        guard case .apns(let apns) = app.keys, !apns.certFile.isEmpty, let running = client as? APNsClient,
            let pem = try? FileContents.readText(apns.certFile), let onDisk = try? CertificateSummary(pem: pem)
        else { return false }
        return running.clientCertificate != onDisk
    }

    /// The keys whose new value only a restart applies.
    static func restartOnlyChanges(from old: GatewayConfiguration, to new: GatewayConfiguration) -> [String] {
        var changed: [String] = []
        if old.listenHost != new.listenHost || old.listenPort != new.listenPort { changed.append("listen") }
        if old.loops != new.loops { changed.append("loops") }
        if old.storePath != new.storePath { changed.append("store") }
        if old.maxMessageBytes != new.maxMessageBytes { changed.append("max_message_bytes") }
        if old.maxConcurrentStreams != new.maxConcurrentStreams { changed.append("max_concurrent_streams") }
        if old.maxTokensPerSend != new.maxTokensPerSend { changed.append("max_tokens_per_send") }
        if old.queueLimit != new.queueLimit { changed.append("queue_limit") }
        if old.maxConnections != new.maxConnections { changed.append("max_connections") }
        if old.idleTimeoutSeconds != new.idleTimeoutSeconds { changed.append("idle_timeout_seconds") }
        if old.requestTimeoutSeconds != new.requestTimeoutSeconds { changed.append("request_timeout_seconds") }
        if old.maxBufferedRequestBytesPerConnection != new.maxBufferedRequestBytesPerConnection {
            changed.append("max_buffered_request_bytes_per_connection")
        }
        if old.maxBufferedRequestBytes != new.maxBufferedRequestBytes { changed.append("max_buffered_request_bytes") }
        if old.maxUnsentResponseBytes != new.maxUnsentResponseBytes { changed.append("max_unsent_response_bytes") }
        if old.writeTimeoutSeconds != new.writeTimeoutSeconds { changed.append("write_timeout_seconds") }
        if old.logLevel != new.logLevel { changed.append("log_level") }
        if old.logTokens != new.logTokens { changed.append("log_tokens") }
        if old.reflection != new.reflection { changed.append("reflection") }
        if old.console != new.console { changed.append("console") }
        if old.webhooks != new.webhooks { changed.append("webhooks") }
        if old.deliveryLog != new.deliveryLog { changed.append("delivery_log") }
        if old.metricsListen?.host != new.metricsListen?.host || old.metricsListen?.port != new.metricsListen?.port {
            changed.append("metrics_listen")
        }
        let (a, b) = (old.security, new.security)
        if a.tlsCertFile != b.tlsCertFile || a.tlsKeyFile != b.tlsKeyFile || a.clientCAFile != b.clientCAFile {
            changed.append("tls_cert_file/tls_key_file/client_ca_file")
        }
        if a.allowInsecure != b.allowInsecure { changed.append("allow_insecure") }
        return changed
    }
}
