import PushCore
public import PushTLS

/// The security keys of the config file: TLS on the gRPC listener (`tls_cert_file`, `tls_key_file`,
/// `client_ca_file` for mTLS), `allow_insecure`, and `api_keys`.
public struct SecurityConfiguration: Sendable {
    /// `tls_cert_file`: PEM certificate chain (leaf first) of the gRPC listener. Empty: no TLS.
    public var tlsCertFile = ""
    /// `tls_key_file`: PEM private key of that certificate.
    public var tlsKeyFile = ""
    /// `client_ca_file`: PEM CA certificates; clients must present a certificate they issued (mTLS).
    public var clientCAFile = ""
    /// `allow_insecure`: serve plaintext h2c on a non-loopback address anyway.
    public var allowInsecure = false
    /// `api_keys`: who may call Push and Registry (see ``Caller``).
    public var apiKeys = APIKeys()
    /// Where each app name of `api_keys` was written (for errors found once the apps are known).
    var appReferences: [(app: String, path: String)] = []

    public init() {}

    static let keys: Set<String> = ["tls_cert_file", "tls_key_file", "client_ca_file", "allow_insecure", "api_keys"]

    public var tlsEnabled: Bool { !tlsCertFile.isEmpty }

    /// Reads the security keys of the config's root object.
    static func parse(_ reader: ConfigObject) throws(ConfigurationError) -> SecurityConfiguration {
        var security = SecurityConfiguration()
        security.tlsCertFile = try reader.string("tls_cert_file") ?? ""
        security.tlsKeyFile = try reader.string("tls_key_file") ?? ""
        security.clientCAFile = try reader.string("client_ca_file") ?? ""
        security.allowInsecure = try reader.bool("allow_insecure") ?? false
        guard let entries = try reader.array("api_keys") else { return security }
        var keys: [APIKey] = []
        for (index, entry) in entries.enumerated() {
            let path = "config.api_keys[\(index)]"
            let key = try ConfigObject(entry, path: path)
            try key.checkKeys(["name", "key_sha256", "apps", "admin"])
            guard let name = try key.string("name"), !name.isEmpty else {
                throw ConfigurationError("\(path).name: required")
            }
            if keys.contains(where: { $0.name == name }) {
                throw ConfigurationError("\(path).name: duplicate key name \(name.debugDescription)")
            }
            guard let hex = try key.string("key_sha256") else {
                throw ConfigurationError(
                    "\(path).key_sha256: required (the key's SHA-256; `pushgate api-key` prints one)")
            }
            guard let hash = APIKeys.parseSHA256Hex(hex) else {
                throw ConfigurationError(
                    "\(path).key_sha256: expected 64 hex digits, the SHA-256 of the key (`pushgate api-key` prints one)"
                )
            }
            if let same = keys.firstIndex(where: { $0.sha256 == hash }) {
                throw ConfigurationError("\(path).key_sha256: the same key as config.api_keys[\(same)]")
            }
            let apps = try appGrant(key, path: path, references: &security.appReferences)
            keys.append(APIKey(name: name, sha256: hash, apps: apps, admin: try key.bool("admin") ?? false))
        }
        security.apiKeys = APIKeys(keys)
        return security
    }

    /// An entry's `apps`: app names, or `"*"` for every app (absent: none). Each name's place is
    /// kept in `references`, to be checked against the configured apps.
    static func appGrant(
        _ entry: ConfigObject, path: String, references: inout [(app: String, path: String)]
    ) throws(ConfigurationError) -> AppGrant {
        var names = Set<String>()
        var all = false
        for (appIndex, value) in (try entry.array("apps") ?? []).enumerated() {
            let appPath = "\(path).apps[\(appIndex)]"
            guard case .string(let app) = value, !app.isEmpty else {
                throw ConfigurationError("\(appPath): expected an app name or \"*\"")
            }
            if app == "*" {
                all = true
            } else {
                names.insert(app)
                references.append((app, appPath))
            }
        }
        return all ? .all : .only(names)
    }

    /// The checks that need the final configuration (after flags and the demo app): TLS keys given
    /// together, no plaintext on a non-loopback address without `allow_insecure`, apps that exist.
    public func check(listenHost: String, listenPort: Int, appNames: [String]) throws(ConfigurationError) {
        if tlsCertFile.isEmpty != tlsKeyFile.isEmpty {
            throw ConfigurationError(
                "tls_cert_file, tls_key_file: set both (the listener's certificate and its key) or neither")
        }
        if !clientCAFile.isEmpty && !tlsEnabled {
            throw ConfigurationError(
                "client_ca_file: client certificates need TLS; set tls_cert_file and tls_key_file too")
        }
        if !tlsEnabled && !allowInsecure && !Self.isLoopbackHost(listenHost) {
            let address = listenHost.contains(":") ? "[\(listenHost)]:\(listenPort)" : "\(listenHost):\(listenPort)"
            throw ConfigurationError(
                "listen \(address) is not a loopback address and TLS is off: set tls_cert_file and tls_key_file "
                    + "to serve TLS, or allow_insecure: true (--allow-insecure) to serve plaintext h2c anyway")
        }
        for (app, path) in appReferences where !appNames.contains(app) {
            throw ConfigurationError(
                "\(path): unknown app \(app.debugDescription) (configured: \(appNames.joined(separator: ", ")))")
        }
    }

    /// The listener's TLS context (ALPN h2 for gRPC and Connect, http/1.1 for Connect and plain
    /// HTTP; client certificates required with `client_ca_file`), or nil without TLS.
    public func makeServerTLSContext() throws(ConfigurationError) -> TLSContext? {
        guard tlsEnabled else { return nil }
        do {
            return try TLSContext.server(
                certificateChainFile: tlsCertFile, privateKeyFile: tlsKeyFile, alpn: ["h2", "http/1.1"],
                clientCAFile: clientCAFile.isEmpty ? nil : clientCAFile)
        } catch {
            let keys =
                clientCAFile.isEmpty ? "tls_cert_file, tls_key_file" : "tls_cert_file, tls_key_file, client_ca_file"
            throw ConfigurationError("\(keys): \(error)")
        }
    }

    /// How the listener is secured, for the start-up log: `off`, `tls` or `mtls`.
    public var tlsMode: String { !tlsEnabled ? "off" : clientCAFile.isEmpty ? "tls" : "mtls" }

    /// `localhost`, `::1` and 127.0.0.0/8. Anything else (0.0.0.0, ::, other names) is not loopback.
    static func isLoopbackHost(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }
}
