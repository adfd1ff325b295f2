import PushCommandLine
import PushCore
import PushTLS

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate bench`'s gateway: the processes it starts (mock and gateway) or the gateway it is given.
struct BenchSetup {
    var files: BenchFiles?
    var mock: BenchChild?
    var gateway: BenchChild?
    var host = "127.0.0.1"
    var port = 0
    var gatewayPID: pid_t?
    /// Where the gateway serves `/metrics` (the provider-request latency); nil: not known.
    var metrics: (host: String, port: Int)?
    var mockURL: String?
    /// The tokens to send to when they come from the mock (Web Push subscriptions); nil otherwise.
    var tokens: [String]?
    var mockFinalLog = ""
    var gatewayExit: Int32?
    var description = ""

    mutating func start(_ options: BenchOptions) async throws {
        if let target = options.target {
            host = target.host
            port = target.port
            gatewayPID = options.gatewayPID
            metrics = options.gatewayMetrics
            description = "target \(host):\(port)" + (gatewayPID.map { " (pid \($0))" } ?? "")
            return
        }
        let files = try BenchFiles.make()
        self.files = files
        let app: [(String, JSONValue)]
        switch options.provider {
        case .apns: app = try startAPNs(options, files)
        case .fcm: app = try startFCM(options, files)
        case .adm: app = try startADM(options, files)
        case .webpush: app = try await startWebPush(options, files)
        case .hms: app = try startHMS(options, files)
        }
        // The store lives in the temp dir (never in the working directory), unless one is named.
        let store = options.store ?? files.path("pushgate.db")
        if options.mode == .publish {
            try await BenchPublish.preload(store: store, subscribers: options.subscribers, provider: options.provider)
        }
        var config: [(String, JSONValue)] = [
            ("listen", .string("127.0.0.1:0")), ("apps", .array([.object(app)])), ("store", .string(store)),
            // For its provider-request latency histogram.
            ("metrics_listen", .string("127.0.0.1:0")),
        ]
        if let limit = options.queueLimit { config.append(("queue_limit", .number(String(limit)))) }
        if let loops = options.gatewayLoops { config.append(("loops", .number(String(loops)))) }
        switch options.deliveryLog {
        case nil: break
        case .off: config.append(("delivery_log", .object([("enabled", .bool(false))])))
        case .successSamplePercent(let percent):
            config.append(("delivery_log", .object([("success_sample_percent", .number(String(percent)))])))
        }
        try files.write("pushgate.json", String(decoding: JSONWriter.encode(.object(config)), as: UTF8.self) + "\n")
        let gateway = try BenchChild.spawn(
            name: "gateway", arguments: [currentExecutablePath(), "serve", "--config", files.path("pushgate.json")],
            logPath: files.path("gateway.log"))
        self.gateway = gateway
        let address = try gateway.waitForLog(after: "msg=listening address=127.0.0.1:")
        guard let port = Int(address) else { throw CommandLineError("gateway: cannot read its port from \(address)") }
        self.port = port
        let metricsAddress = try gateway.waitForLog(after: "msg=\"metrics listening\" address=127.0.0.1:")
        guard let metricsPort = Int(metricsAddress) else {
            throw CommandLineError("gateway: cannot read its metrics port from \(metricsAddress)")
        }
        metrics = ("127.0.0.1", metricsPort)
        gatewayPID = gateway.pid
        let url = mockURL ?? ""
        description =
            "gateway (child, pid \(gateway.pid), \(options.connections) \(options.provider.name) connection(s)) → "
            + (mock == nil ? url : "\(mock!.name) (child, pid \(mock!.pid)) \(url)")
    }

    /// Starts mock-apns (unless --apns names one) and returns the gateway's APNs app.
    private mutating func startAPNs(_ options: BenchOptions, _ files: BenchFiles) throws -> [(String, JSONValue)] {
        let binary = currentExecutablePath()
        let key = try ES256Signer.generateP8()
        try files.write("AuthKey.p8", key.privateKeyPEM)
        let keyID = "BENCHKEY01"
        let teamID = "BENCHTEAM1"
        let url: String
        let ca: String
        if let apnsURL = options.apnsURL, let apnsCA = options.apnsCA {
            url = apnsURL
            ca = apnsCA
        } else {
            var arguments = [binary, "mock-apns", "--listen", "127.0.0.1:0", "--write-ca", files.path("mock-ca.pem")]
            if options.verifyTokens {
                arguments += ["--p8", files.path("AuthKey.p8"), "--key-id", keyID, "--team-id", teamID]
            }
            url = try startMock("mock-apns", arguments + mockFlags(options), files)
            ca = files.path("mock-ca.pem")
        }
        mockURL = url
        return app(
            "apns", options,
            [
                "bundle_id": "com.example.bench", "team_id": teamID, "key_id": keyID,
                "key_file": files.path("AuthKey.p8"), "url": url, "ca_file": ca,
            ])
    }

    /// Starts mock-fcm with a service account it writes (unless --fcm names a running mock) and
    /// returns the gateway's FCM app; the account's token_uri points at the mock.
    private mutating func startFCM(_ options: BenchOptions, _ files: BenchFiles) throws -> [(String, JSONValue)] {
        let url: String
        let ca: String
        let account: String
        if let fcmURL = options.fcmURL, let fcmCA = options.fcmCA, let serviceAccount = options.serviceAccount {
            (url, ca, account) = (fcmURL, fcmCA, serviceAccount)
        } else {
            let arguments =
                [
                    currentExecutablePath(), "mock-fcm", "--listen", "127.0.0.1:0", "--write-ca",
                    files.path("mock-ca.pem"),
                    "--write-service-account", files.path("service-account.json"),
                ] + mockFlags(options) + (options.httpVersion == "1.1" ? ["--http1"] : [])
            url = try startMock("mock-fcm", arguments, files)
            ca = files.path("mock-ca.pem")
            account = files.path("service-account.json")
        }
        mockURL = url
        return app("fcm", options, ["service_account_file": account, "url": url, "ca_file": ca])
    }

    /// Starts mock-adm with client credentials (unless --adm names a running mock) and returns
    /// the gateway's ADM app, its token_url on the mock.
    private mutating func startADM(_ options: BenchOptions, _ files: BenchFiles) throws -> [(String, JSONValue)] {
        let url: String
        let ca: String
        let clientID: String
        let secretFile: String
        if let admURL = options.admURL, let admCA = options.admCA, let id = options.admClientID,
            let secret = options.admClientSecretFile
        {
            (url, ca, clientID, secretFile) = (admURL, admCA, id, secret)
        } else {
            clientID = "amzn1.application-oa2-client.bench"
            secretFile = files.path("adm-client-secret")
            let arguments =
                [
                    currentExecutablePath(), "mock-adm", "--listen", "127.0.0.1:0", "--write-ca",
                    files.path("mock-ca.pem"),
                    "--client-id", clientID, "--write-client-secret", secretFile,
                ] + mockFlags(options) + (options.httpVersion == "2" ? ["--http2"] : [])
            url = try startMock("mock-adm", arguments, files)
            ca = files.path("mock-ca.pem")
        }
        mockURL = url
        return app(
            "adm", options,
            [
                "client_id": clientID, "client_secret_file": secretFile, "url": url,
                "token_url": url + "/auth/o2/token", "ca_file": ca,
            ])
    }

    /// Starts mock-hms with a service account it writes and returns the gateway's v3 app.
    private mutating func startHMS(_ options: BenchOptions, _ files: BenchFiles) throws -> [(String, JSONValue)] {
        let account = files.path("huawei-service-account.json")
        let arguments =
            [
                currentExecutablePath(), "mock-hms", "--listen", "127.0.0.1:0", "--write-ca", files.path("mock-ca.pem"),
                "--write-service-account", account,
            ] + mockFlags(options) + (options.httpVersion == "2" ? ["--http2"] : [])
        let url = try startMock("mock-hms", arguments, files)
        mockURL = url
        return app(
            "hms", options,
            ["api": "v3", "service_account_file": account, "url": url, "ca_file": files.path("mock-ca.pem")])
    }

    /// Starts mock-webpush (decrypting every 100th push: the check without the mock's ECDH on
    /// every request), makes a VAPID key, asks the mock for `--tokens-per-send` subscriptions on
    /// 127.0.0.1 and returns the gateway's webpush app, which allows that one origin.
    private mutating func startWebPush(_ options: BenchOptions, _ files: BenchFiles) async throws -> [(
        String, JSONValue
    )] {
        let arguments =
            [
                currentExecutablePath(), "mock-webpush", "--listen", "127.0.0.1:0", "--write-ca",
                files.path("mock-ca.pem"), "--decrypt-every", "100",
            ] + mockFlags(options)
            + (options.httpVersion == "1.1" ? ["--http1-only"] : options.httpVersion == "2" ? ["--http2-only"] : [])
        let url = try startMock("mock-webpush", arguments, files)
        mockURL = url
        let origin = String(url.dropFirst("https://".count))
        try files.write("vapid.pem", try ES256Signer.generateP8().privateKeyPEM)
        tokens = try await BenchSubscriptions.fetch(
            count: options.tokensPerSend, from: origin, caFile: files.path("mock-ca.pem"))
        var members = app(
            "webpush", options,
            [
                "vapid_key_file": files.path("vapid.pem"), "vapid_subject": "mailto:bench@example.com",
                "ca_file": files.path("mock-ca.pem"),
            ])
        members.append(("allowed_hosts", .array([.string(origin)])))
        // The mock listens on loopback, which a webpush app refuses unless told.
        members.append(("allow_private_addresses", .bool(true)))
        return members
    }

    /// The gateway's one app, `bench`, on `platform`: its platform's `keys` (strings, in this order),
    /// the bench's connections and, when asked for, its HTTP version.
    private func app(
        _ platform: String, _ options: BenchOptions, _ keys: KeyValuePairs<String, String>
    ) -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("name", .string("bench")), ("platform", .string(platform))]
        members += keys.map { ($0.key, .string($0.value)) }
        members.append(("connections", .number(String(options.connections))))
        if let version = options.httpVersion { members.append(("http_version", .string(version))) }
        return members
    }

    /// Spawns mock `name` (`mock-apns`, `mock-fcm`, `mock-adm`) and waits until it listens and has written its
    /// certificate; its URL.
    private mutating func startMock(_ name: String, _ arguments: [String], _ files: BenchFiles) throws -> String {
        let mock = try BenchChild.spawn(name: name, arguments: arguments, logPath: files.path("\(name).log"))
        self.mock = mock
        let port = try mock.waitForLog(after: "\(name) listening on 127.0.0.1:")
        _ = try mock.waitForLog(after: "\(name): wrote the certificate to trust to ")
        return "https://127.0.0.1:\(port)"
    }

    /// The flags both mocks take.
    private func mockFlags(_ options: BenchOptions) -> [String] {
        var arguments: [String] = []
        if let n = options.mockLoops { arguments += ["--loops", "\(n)"] }
        if let n = options.delayMs { arguments += ["--delay-ms", "\(n)"] }
        if let n = options.maxStreams { arguments += ["--max-streams", "\(n)"] }
        return arguments
    }

    mutating func tearDown(keepFiles: Bool) {
        if let gateway {
            gatewayExit = gateway.stop()
            self.gateway = nil
        }
        if let mock {
            mock.stop()
            mockFinalLog = mock.log
            self.mock = nil
        }
        if let files {
            if keepFiles {
                printError("pushgate bench: kept \(files.directory)")
            } else {
                files.remove()
            }
            self.files = nil
        }
    }
}
