import PushCore
import PushProto
import Testing

@testable import PushGateway

@Suite("API keys and callers")
struct APIKeysTests {
    static let sendKey = "pgk_send-only-key"
    static let adminKey = "pgk_admin-key"
    static let allAppsKey = "pgk_all-apps"

    static func hash(_ key: String) -> [UInt8] { APIKeys.parseSHA256Hex(APIKeys.sha256Hex(of: key))! }

    static let keys = APIKeys([
        APIKey(name: "sender", sha256: hash(sendKey), apps: .only(["demo"]), admin: false),
        APIKey(name: "ops", sha256: hash(adminKey), apps: .only([]), admin: true),
        APIKey(name: "everything", sha256: hash(allAppsKey), apps: .all, admin: false),
    ])

    func caller(_ authorization: String?, loopback: Bool = false, keys: APIKeys = keys) -> Result<Caller, GRPCStatus> {
        Result { () throws(GRPCStatus) in
            try Caller.resolve(keys: keys, authorization: authorization, isLoopbackPeer: loopback)
        }
    }

    func failure(_ result: Result<Caller, GRPCStatus>) -> GRPCStatus? {
        if case .failure(let status) = result { return status }
        return nil
    }

    // MARK: Hashes and comparison

    @Test("hex hashes parse in either case; anything but 64 hex digits is refused")
    func hexParsing() {
        let lower = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(APIKeys.parseSHA256Hex(lower) == APIKeys.parseSHA256Hex(lower.uppercased()))
        #expect(APIKeys.parseSHA256Hex(lower)?.count == 32)
        #expect(APIKeys.parseSHA256Hex(lower)?.first == 0xba)
        #expect(Hex.lowercase(APIKeys.parseSHA256Hex(lower)!) == lower)
        #expect(APIKeys.parseSHA256Hex(String(lower.dropLast())) == nil)
        #expect(APIKeys.parseSHA256Hex(lower + "0") == nil)
        #expect(APIKeys.parseSHA256Hex(String(lower.dropLast()) + "g") == nil)
        #expect(APIKeys.parseSHA256Hex(String(repeating: " ", count: 64)) == nil)
        #expect(APIKeys.sha256Hex(of: "abc") == lower)
    }

    @Test("constant-time comparison: equal only for equal bytes of equal length")
    func constantTimeEqual() {
        let a: [UInt8] = Array(0..<32)
        var b = a
        #expect(ConstantTime.equal(a, b))
        b[31] ^= 1
        #expect(!ConstantTime.equal(a, b))
        b = a
        b[0] ^= 0x80
        #expect(!ConstantTime.equal(a, b))
        #expect(!ConstantTime.equal(a, Array(a.dropLast())))
        #expect(ConstantTime.equal([], []))
    }

    @Test("a presented key matches its configured hash and no other")
    func matching() {
        #expect(Self.keys.match(presented: Self.sendKey)?.name == "sender")
        #expect(Self.keys.match(presented: Self.adminKey)?.name == "ops")
        #expect(Self.keys.match(presented: Self.sendKey + "x") == nil)
        #expect(Self.keys.match(presented: "") == nil)
    }

    @Test("generated keys are fresh, prefixed, and hash to what is printed")
    func generate() throws {
        let one = try APIKeys.generate()
        let two = try APIKeys.generate()
        #expect(one.key != two.key)
        #expect(one.key.hasPrefix("pgk_"))
        #expect(one.key.count == 4 + 43)
        #expect(APIKeys.sha256Hex(of: one.key) == one.sha256Hex)
    }

    // MARK: Authentication

    @Test("Bearer keys: scheme case-insensitive, surrounding spaces allowed")
    func bearer() throws {
        #expect(try caller("Bearer \(Self.sendKey)").get().name == "sender")
        #expect(try caller("bearer \(Self.sendKey)").get().name == "sender")
        #expect(try caller("BEARER   \(Self.sendKey) ").get().name == "sender")
    }

    @Test("missing, malformed and wrong keys are UNAUTHENTICATED without echoing the key")
    func unauthenticated() throws {
        let missing = try #require(failure(caller(nil)))
        #expect(missing.code == .unauthenticated)
        #expect(missing.message.contains("missing"))
        for malformed in ["", "Bearer", "Bearer ", "Basic abc", Self.sendKey, "Bearer a b"] {
            let status = try #require(failure(caller(malformed)), "\(malformed)")
            #expect(status.code == .unauthenticated)
            #expect(status.message.contains("Bearer"))
        }
        let wrong = try #require(failure(caller("Bearer pgk_not-a-configured-key")))
        #expect(wrong.code == .unauthenticated)
        #expect(!wrong.message.contains("pgk_not-a-configured-key"))
        #expect(wrong.message.contains("not valid"))
        // With keys configured, loopback needs a key as well.
        #expect(failure(caller(nil, loopback: true))?.code == .unauthenticated)
    }

    @Test("no keys configured: loopback may do everything, other peers are refused")
    func noKeys() throws {
        let local = try caller(nil, loopback: true, keys: APIKeys()).get()
        #expect(local.isAdmin)
        #expect(local.apps == .all)
        // A header is ignored then.
        #expect(try caller("Bearer whatever", loopback: true, keys: APIKeys()).get().isAdmin)
        let remote = try #require(failure(caller(nil, loopback: false, keys: APIKeys())))
        #expect(remote.code == .unauthenticated)
        #expect(remote.message == "no api_keys configured: only loopback clients are served")
    }

    // MARK: Authorization

    @Test("app rules: listed apps only, * for every app; the message names the field")
    func appRules() throws {
        let sender = try caller("Bearer \(Self.sendKey)").get()
        try sender.requireApp("demo", field: "notifications[0].app")
        let denied = try #require(throws: GRPCStatus.self) {
            try sender.requireApp("voip", field: "notifications[2].app")
        }
        #expect(denied.code == .permissionDenied)
        #expect(denied.message == "notifications[2].app: key \"sender\" may not send for app \"voip\"")
        let everything = try caller("Bearer \(Self.allAppsKey)").get()
        try everything.requireApp("voip", field: "x")
        try everything.requireApp("anything", field: "x")
        let ops = try caller("Bearer \(Self.adminKey)").get()
        #expect(throws: GRPCStatus.self) { try ops.requireApp("demo", field: "x") }
    }

    @Test("admin rule: only admin keys pass requireAdmin")
    func adminRule() throws {
        try caller("Bearer \(Self.adminKey)").get().requireAdmin("CreateTopic")
        let status = try #require(throws: GRPCStatus.self) {
            try caller("Bearer \(Self.allAppsKey)").get().requireAdmin("CreateTopic")
        }
        #expect(status.code == .permissionDenied)
        #expect(status.message.hasPrefix("CreateTopic: key \"everything\" is not an admin key"))
    }

    @Test("Send is authorized per notification before validation; empty app means the first app")
    func sendAuthorization() throws {
        var config = GatewayConfiguration()
        config.apps = [
            AppConfiguration(name: "demo", bundleID: "com.a"), AppConfiguration(name: "voip", bundleID: "com.b"),
        ]
        func request(_ apps: [String]) -> PushgateV1.SendRequest {
            var request = PushgateV1.SendRequest()
            request.notifications = apps.map { app in
                var n = PushgateV1.Notification()
                n.app = app
                n.tokens = ["not-even-a-token"]
                return n
            }
            return request
        }
        let sender = try caller("Bearer \(Self.sendKey)").get()
        try PushService.authorize(
            request(["demo", "", "demo"]), caller: sender, routes: AppRoutes(configuration: config))
        let status = try #require(throws: GRPCStatus.self) {
            try PushService.authorize(
                request(["demo", "", "voip"]), caller: sender, routes: AppRoutes(configuration: config))
        }
        #expect(status.message == "notifications[2].app: key \"sender\" may not send for app \"voip\"")
        // An unknown app is PERMISSION_DENIED for a restricted key (no list of configured apps).
        let unknown = try #require(throws: GRPCStatus.self) {
            try PushService.authorize(request(["nope"]), caller: sender, routes: AppRoutes(configuration: config))
        }
        #expect(unknown.code == .permissionDenied)
        try PushService.authorize(
            request(["nope"]), caller: caller("Bearer \(Self.allAppsKey)").get(),
            routes: AppRoutes(configuration: config))
    }

    // MARK: Config

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

    @Test("security keys are read")
    func configKeys() throws {
        let hash = APIKeys.sha256Hex(of: "k").uppercased()
        let config = try parse(
            """
            {"tls_cert_file": "c.pem", "tls_key_file": "k.pem", "client_ca_file": "ca.pem", "allow_insecure": true,
             "apps": [{"name": "demo"}],
             "api_keys": [{"name": "a", "key_sha256": "\(hash)", "apps": ["demo"], "admin": true},
                          {"name": "b", "key_sha256": "\(APIKeys.sha256Hex(of: "j"))", "apps": ["*"]}]}
            """)
        #expect(config.security.tlsCertFile == "c.pem")
        #expect(config.security.tlsKeyFile == "k.pem")
        #expect(config.security.clientCAFile == "ca.pem")
        #expect(config.security.allowInsecure)
        #expect(config.security.tlsMode == "mtls")
        #expect(config.security.apiKeys.keys.map(\.name) == ["a", "b"])
        #expect(config.security.apiKeys.keys[0].admin)
        #expect(config.security.apiKeys.keys[0].apps == .only(["demo"]))
        #expect(config.security.apiKeys.keys[1].apps == .all)
        #expect(!config.security.apiKeys.keys[1].admin)
        #expect(config.security.apiKeys.match(presented: "k")?.name == "a")
    }

    @Test("bad api_keys entries name the key")
    func configErrors() {
        let hash = APIKeys.sha256Hex(of: "k")
        #expect(error(#"{"api_keys": [{"key_sha256": "\#(hash)"}]}"#) == "config.api_keys[0].name: required")
        #expect(error(#"{"api_keys": [{"name": "a"}]}"#).hasPrefix("config.api_keys[0].key_sha256: required"))
        #expect(
            error(#"{"api_keys": [{"name": "a", "key_sha256": "abc"}]}"#).hasPrefix(
                "config.api_keys[0].key_sha256: expected 64 hex digits"))
        #expect(
            error(#"{"api_keys": [{"name": "a", "key": "abc"}]}"#).hasPrefix("config.api_keys[0]: unknown key \"key\""))
        #expect(
            error(
                #"{"api_keys": [{"name": "a", "key_sha256": "\#(hash)"}, {"name": "b", "key_sha256": "\#(hash.uppercased())"}]}"#
            )
                == "config.api_keys[1].key_sha256: the same key as config.api_keys[0]")
        #expect(
            error(
                #"{"api_keys": [{"name": "a", "key_sha256": "\#(hash)"}, {"name": "a", "key_sha256": "\#(APIKeys.sha256Hex(of: "j"))"}]}"#
            )
                == "config.api_keys[1].name: duplicate key name \"a\"")
        #expect(
            error(#"{"api_keys": [{"name": "a", "key_sha256": "\#(hash)", "apps": [1]}]}"#).hasPrefix(
                "config.api_keys[0].apps[0]"))
        #expect(error(#"{"allow_insecure": "yes"}"#) == "config.allow_insecure: expected true or false")
    }

    @Test("start-up checks: TLS files together, no h2c off loopback without allow_insecure, known apps")
    func startChecks() throws {
        func check(_ json: String, host: String = "127.0.0.1", apps: [String] = ["demo"]) -> String {
            do {
                try parse(json).security.check(listenHost: host, listenPort: 50051, appNames: apps)
                return "ok"
            } catch {
                return error.description
            }
        }
        #expect(check("{}") == "ok")
        #expect(check("{}", host: "::1") == "ok")
        #expect(check("{}", host: "localhost") == "ok")
        #expect(check("{}", host: "127.1.2.3") == "ok")
        let refused = check("{}", host: "0.0.0.0")
        #expect(refused.hasPrefix("listen 0.0.0.0:50051 is not a loopback address"))
        #expect(
            refused.contains("tls_cert_file") && refused.contains("tls_key_file") && refused.contains("allow_insecure"))
        #expect(check("{}", host: "::").hasPrefix("listen [::]:50051 is not a loopback address"))
        #expect(check("{}", host: "10.0.0.1") != "ok")
        #expect(check(#"{"allow_insecure": true}"#, host: "0.0.0.0") == "ok")
        #expect(check(#"{"tls_cert_file": "c", "tls_key_file": "k"}"#, host: "0.0.0.0") == "ok")
        #expect(check(#"{"tls_cert_file": "c"}"#).hasPrefix("tls_cert_file, tls_key_file: set both"))
        #expect(check(#"{"client_ca_file": "ca"}"#).hasPrefix("client_ca_file: client certificates need TLS"))
        let hash = APIKeys.sha256Hex(of: "k")
        #expect(
            check(#"{"api_keys": [{"name": "a", "key_sha256": "\#(hash)", "apps": ["*", "nope"]}]}"#)
                == "config.api_keys[0].apps[1]: unknown app \"nope\" (configured: demo)")
    }
}
