import PushGateway
import PushTransport
import PushWebPush
import Testing

@Suite("Config file")
struct GatewayConfigurationTests {
    func parse(_ json: String) throws(ConfigurationError) -> GatewayConfiguration {
        try GatewayConfiguration.parse(json: Array(json.utf8))
    }

    func error(_ json: String) -> String {
        do {
            _ = try parse(json)
            return "no error"
        } catch {
            return error.description
        }
    }

    @Test("an empty object gives the documented defaults")
    func defaults() throws {
        let config = try parse("{}")
        #expect(config.listenHost == "127.0.0.1")
        #expect(config.listenPort == 50051)
        #expect(config.maxMessageBytes == 16 << 20)
        #expect(config.maxConcurrentStreams == 256)
        #expect(config.apps.isEmpty)
        #expect(config.reflection, "reflection is on by default")
    }

    @Test("every key is read")
    func everyKey() throws {
        let config = try parse(
            """
            {"listen": "[::1]:9000", "loops": 3, "max_message_bytes": 2048, "max_concurrent_streams": 10,
             "max_tokens_per_send": 5, "log_level": "debug",
             "apps": [{"name": "a", "platform": "apns", "bundle_id": "com.a", "team_id": "T", "key_id": "K",
                       "key_file": "k.p8", "sandbox": true, "url": "https://127.0.0.1:8443", "ca_file": "ca.pem",
                       "connections": 4, "connect_timeout_seconds": 2, "ping_interval_seconds": 3,
                       "ping_timeout_seconds": 1},
                      {"name": "b", "cert_file": "c.pem", "key_file": "k.pem"}]}
            """)
        #expect(config.listenHost == "::1")
        #expect(config.listenPort == 9000)
        #expect(config.loops == 3)
        #expect(config.maxMessageBytes == 2048)
        #expect(config.maxConcurrentStreams == 10)
        #expect(config.maxTokensPerSend == 5)
        #expect(config.logLevel == .debug)
        #expect(config.apps.count == 2)
        guard case .apns(let first) = config.apps[0].keys, case .apns(let second) = config.apps[1].keys else {
            Issue.record("both apps are apns apps: \(config.apps)")
            return
        }
        #expect(first.sandbox)
        #expect(config.apps[0].connections == 4)
        #expect(config.apps[0].connectTimeoutSeconds == 2)
        #expect(config.apps[0].pingIntervalSeconds == 3)
        #expect(config.apps[0].pingTimeoutSeconds == 1)
        #expect(
            config.apps[1].connectTimeoutSeconds == 10, "defaults: 10 s connect, 60 s PING interval, 10 s PING timeout")
        #expect(config.apps[1].pingIntervalSeconds == 60)
        #expect(config.apps[1].pingTimeoutSeconds == 10)
        #expect(config.apps[0].url == "https://127.0.0.1:8443")
        #expect(second.certFile == "c.pem")
        #expect(config.app(named: "")?.name == "a", "empty app name means the first app")
        #expect(config.app(named: "b")?.name == "b")
        #expect(config.app(named: "c") == nil)
    }

    @Test("the front door's limits are read, defaulted and checked against each other")
    func protectionLimits() throws {
        let defaults = try parse("{}")
        #expect(defaults.maxBufferedRequestBytesPerConnection == 64 << 20)
        #expect(defaults.maxBufferedRequestBytes == 1 << 30)
        #expect(defaults.maxUnsentResponseBytes == 64 << 20)
        #expect(defaults.writeTimeoutSeconds == 30)
        #expect(defaults.sendTimeoutSeconds == 300)
        let set = try parse(
            """
            {"max_message_bytes": 1048576, "max_buffered_request_bytes_per_connection": 2097152,
             "max_buffered_request_bytes": 4194304, "max_unsent_response_bytes": 65536,
             "write_timeout_seconds": 0, "send_timeout_seconds": 5}
            """)
        #expect(set.maxBufferedRequestBytesPerConnection == 2 << 20)
        #expect(set.maxBufferedRequestBytes == 4 << 20)
        #expect(set.maxUnsentResponseBytes == 65536)
        #expect(set.writeTimeoutSeconds == 0)
        #expect(set.sendTimeoutSeconds == 5)
        #expect(
            error(#"{"max_message_bytes": 1048576, "max_buffered_request_bytes_per_connection": 1048576}"#)
                .hasPrefix("config.max_buffered_request_bytes_per_connection: 1048576 is less than max_message_bytes"))
        #expect(
            error(#"{"max_buffered_request_bytes": 1048576}"#)
                .hasPrefix(
                    "config.max_buffered_request_bytes: 1048576 is less than max_buffered_request_bytes_per_connection")
        )
    }

    @Test("the client connections allowed fit under the descriptor limit, keeping room for providers")
    func descriptorLimit() throws {
        let config = try parse(#"{"max_connections": 5000}"#)
        #expect(config.clientConnectionsAllowed(descriptorLimit: 1_048_576) == 5000)
        #expect(config.clientConnectionsAllowed(descriptorLimit: 1024) == 1024 - 64)
    }

    @Test("fanout: every key read, max_hold_seconds 4 hours by default and 0 allowed, out of range named")
    func fanOut() throws {
        #expect(try parse("{}").fanOut.maxHoldSeconds == 14_400)
        let config = try parse(
            #"{"fanout": {"workers": 3, "chunk_size": 10, "lease_seconds": 5, "poll_ms": 50, "max_hold_seconds": 0}}"#)
        #expect(config.fanOut.workers == 3 && config.fanOut.chunkSize == 10 && config.fanOut.leaseSeconds == 5)
        #expect(config.fanOut.pollMilliseconds == 50 && config.fanOut.maxHoldSeconds == 0)
        #expect(error(#"{"fanout": {"max_hold_seconds": 700000}}"#).contains("max_hold_seconds"))
        #expect(error(#"{"fanout": {"max_hold": 5}}"#).contains("max_hold"))
    }

    @Test("mistakes name the key")
    func mistakes() {
        #expect(error("{\"listn\": 1}").hasPrefix("config: unknown key \"listn\""))
        #expect(error("{\"loops\": \"two\"}") == "config.loops: expected an integer")
        #expect(error("{\"loops\": 0}") == "config.loops: must be between 1 and 256")
        #expect(error("{\"listen\": \"nowhere\"}").hasPrefix("listen: expected host:port"))
        #expect(error("{\"apps\": [{}]}") == "config.apps[0].name: required")
        #expect(error("{\"apps\": [{\"name\": \"a\", \"platform\": \"wns\"}]}").hasPrefix("config.apps[0].platform"))
        #expect(error("{\"apps\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}").hasPrefix("config.apps[1].name: duplicate"))
        #expect(error("{\"apps\": [{\"name\": \"a\", \"colour\": 1}]}").hasPrefix("config.apps[0]: unknown key"))
        #expect(error("{\"reflection\": \"off\"}") == "config.reflection: expected true or false")
        #expect(error("[1]") == "config: expected a JSON object")
        #expect(error("{").hasPrefix("config: not valid JSON"))
    }

    @Test("fcm apps: their keys, required service account, and no APNs keys")
    func fcmApps() throws {
        let config = try parse(
            """
            {"apps": [{"name": "android", "platform": "fcm", "service_account_file": "sa.json",
                       "project_id": "p-1", "token_url": "https://127.0.0.1:9/token",
                       "url": "https://127.0.0.1:8444", "ca_file": "ca.pem", "connections": 2}]}
            """)
        let app = try #require(config.apps.first)
        var expected = AppConfiguration.FCMKeys(serviceAccountFile: "sa.json")
        expected.projectID = "p-1"
        expected.tokenURL = "https://127.0.0.1:9/token"
        #expect(app.keys == .fcm(expected))
        #expect(app.connections == 2)
        #expect(
            error(#"{"apps": [{"name": "a", "platform": "fcm"}]}"#)
                .hasPrefix("config.apps[0].service_account_file: required for an fcm app"))
        #expect(
            error(#"{"apps": [{"name": "a", "platform": "fcm", "service_account_file": "s", "team_id": "T"}]}"#)
                .hasPrefix(#"config.apps[0]: unknown key "team_id" for an fcm app"#))
        #expect(
            error(#"{"apps": [{"name": "a", "service_account_file": "s"}]}"#)
                .hasPrefix(#"config.apps[0]: unknown key "service_account_file" for an apns app"#))
    }

    @Test("webpush apps: VAPID key and subject required, allowed_hosts checked, no url, auto HTTP version")
    func webPushApps() throws {
        let config = try parse(
            """
            {"apps": [{"name": "web", "platform": "webpush", "vapid_key_file": "vapid.pem",
                       "vapid_subject": "mailto:push@example.com", "allowed_hosts": ["localhost:8446", "*.example.com"],
                       "max_origins": 8, "origin_idle_timeout_seconds": 60, "allow_private_addresses": true},
                      {"name": "web2", "platform": "webpush", "vapid_key_file": "v", "vapid_subject": "https://example.com"}]}
            """)
        let app = try #require(config.apps.first)
        var expected = AppConfiguration.WebPushKeys(
            vapidKeyFile: "vapid.pem", vapidSubject: "mailto:push@example.com",
            allowedHosts: try WebPushHostPolicy(["localhost:8446", "*.example.com"]))
        expected.maxOrigins = 8
        expected.originIdleTimeoutSeconds = 60
        expected.allowPrivateAddresses = true
        #expect(app.keys == .webpush(expected))
        #expect(app.platform == .webpush)
        #expect(app.httpVersion == .auto)
        guard case .webpush(let defaults) = config.apps[1].keys else {
            Issue.record("not webpush")
            return
        }
        #expect(defaults.allowedHosts == (try WebPushHostPolicy()))
        #expect(defaults.maxOrigins == 64 && defaults.originIdleTimeoutSeconds == 300)
        #expect(!defaults.allowPrivateAddresses, "push services on private addresses are refused by default")
        let base = #""name": "a", "platform": "webpush", "vapid_key_file": "v", "vapid_subject": "mailto:a@b.c""#
        #expect(
            error(#"{"apps": [{"name": "a", "platform": "webpush", "vapid_subject": "mailto:a@b.c"}]}"#)
                .hasPrefix("config.apps[0].vapid_key_file: required for a webpush app"))
        #expect(
            error(#"{"apps": [{"name": "a", "platform": "webpush", "vapid_key_file": "v"}]}"#)
                .hasPrefix("config.apps[0].vapid_subject: required for a webpush app"))
        #expect(
            error(#"{"apps": [{"name": "a", "platform": "webpush", "vapid_key_file": "v", "vapid_subject": "a@b.c"}]}"#)
                .hasPrefix("config.apps[0].vapid_subject: required for a webpush app"))
        #expect(
            error(#"{"apps": [{\#(base), "allowed_hosts": ["ok.example", "https://x"]}]}"#)
                .hasPrefix(#"config.apps[0].allowed_hosts[1]: "https://x" is not a host name"#))
        #expect(
            error(#"{"apps": [{\#(base), "allow_private_addresses": "yes"}]}"#)
                .hasPrefix("config.apps[0].allow_private_addresses: expected"))
        #expect(
            error(#"{"apps": [{\#(base), "allowed_hosts": [1]}]}"#)
                .hasPrefix("config.apps[0].allowed_hosts[0]: expected a string"))
        #expect(
            error(#"{"apps": [{\#(base), "url": "https://x"}]}"#)
                .hasPrefix(#"config.apps[0]: unknown key "url" for a webpush app"#))
        #expect(
            error(#"{"apps": [{\#(base), "max_origins": 0}]}"#)
                .hasPrefix("config.apps[0].max_origins: must be between 1 and 4096"))
    }

    @Test("adm apps: client id and secret file required, only their own keys")
    func admApps() throws {
        let config = try parse(
            """
            {"apps": [{"name": "fire", "platform": "adm", "client_id": "amzn1.application-oa2-client.x",
                       "client_secret_file": "secret", "token_url": "https://127.0.0.1:9/auth/o2/token",
                       "url": "https://127.0.0.1:8445"}]}
            """)
        let app = try #require(config.apps.first)
        var expected = AppConfiguration.ADMKeys(clientID: "amzn1.application-oa2-client.x", clientSecretFile: "secret")
        expected.tokenURL = "https://127.0.0.1:9/auth/o2/token"
        #expect(app.keys == .adm(expected))
        #expect(app.platform == .adm)
        #expect(
            error(#"{"apps": [{"name": "a", "platform": "adm", "client_secret_file": "s"}]}"#)
                .hasPrefix("config.apps[0].client_id: required for an adm app"))
        #expect(
            error(#"{"apps": [{"name": "a", "platform": "adm", "client_id": "c"}]}"#)
                .hasPrefix("config.apps[0].client_secret_file: required for an adm app"))
        #expect(
            error(
                #"{"apps": [{"name": "a", "platform": "adm", "client_id": "c", "client_secret_file": "s", "project_id": "p"}]}"#
            )
            .hasPrefix(#"config.apps[0]: unknown key "project_id" for an adm app"#))
    }

    @Test(
        "http_version: auto by default for fcm and adm, 2 for apns; apns refuses 1.1; bad values name the key; adm has 4 connections by default"
    )
    func httpVersion() throws {
        let config = try parse(
            """
            {"apps": [{"name": "fire", "platform": "adm", "client_id": "c", "client_secret_file": "s"},
                      {"name": "fire11", "platform": "adm", "client_id": "c", "client_secret_file": "s",
                       "http_version": "1.1"},
                      {"name": "ios", "bundle_id": "b", "team_id": "T", "key_id": "K", "key_file": "k"}]}
            """)
        #expect(config.apps.map(\.httpVersion) == [.auto, .http1, .http2])
        #expect(config.apps.map(\.connections) == [4, 4, 1], "adm: 4 HTTP/1.1 connections by default")
        #expect(config.apps[0].httpVersion.alpn == ["h2", "http/1.1"])
        #expect(
            error(#"{"apps": [{"name": "i", "bundle_id": "b", "http_version": "1.1"}]}"#)
                .hasPrefix("config.apps[0].http_version: APNs speaks only HTTP/2"))
        #expect(
            error(
                #"{"apps": [{"name": "a", "platform": "adm", "client_id": "c", "client_secret_file": "s", "http_version": "3"}]}"#
            )
            .hasPrefix(#"config.apps[0].http_version: "3" is not one of "auto", "2", "1.1""#))
    }
}
