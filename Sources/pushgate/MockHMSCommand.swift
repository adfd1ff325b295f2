import PushCommandLine
import PushCredentials
import PushMockHMS
import PushMockSupport

extension MockHMSConfiguration: MockServerFlags {}

/// `pushgate mock-hms`: runs ``MockHMSServer`` until SIGINT/SIGTERM, for tests and load tests.
enum MockHMSCommand {
    static let usage = """
        Usage: pushgate mock-hms [credentials] [flags]

        A MOCK of Huawei Push Kit over TLS + HTTP/1.1 (keep-alive, ALPN http/1.1; --http2 for h2),
        for tests and load tests. One listener serves both of Huawei's send APIs:
          v3 (HarmonyOS NEXT)  POST /v3/PROJECT_ID/messages:send with Authorization: Bearer <JWT>,
                               the JWT signed PS256 with the service account's key (header kid =
                               key_id; iss = sub_account; aud = https://oauth-login.cloud.huawei.com/
                               oauth2/v3/token; exp at most an hour after iat), and a numeric
                               push-type header (0 notification, 1 widget, 2 extension, 6
                               background, 7 Live View, 10 VoIP); body {"payload":{…},"target":
                               {"token":[…]},"pushOptions":{…}}.
          v1 (the gateway's "v2" API, HMS Core)
                               POST /oauth2/v3/token (form grant_type=client_credentials,
                               client_id=APP_ID, client_secret) for an access token, then
                               POST /v1/APP_ID/messages:send with it; body {"validate_only":false,
                               "message":{"token":[…],"notification"|"android"|"data":…}}.
        Answers are Huawei's {"code":"80000000","msg":"Success","requestId":"…"} or an error code.

        Credentials (v3): given, or generated (an RSA-2048 key) and written for the gateway.
          --service-account FILE    accept JWTs of this service-account JSON (Huawei's console
                                    format: project_id, key_id, private_key, sub_account, …)
          --write-service-account FILE
                                    write the generated account in that format (mode 0600): the
                                    gateway's service_account_file. Without either flag the key is
                                    generated and kept to itself (v3 sends then cannot be signed).
          --project ID              project_id of the generated account (default: 18 random digits)
          --max-jwt-lifetime S      longest exp - iat accepted (default 3660: Huawei's hour plus a
                                    minute); longer: 401 80300036
        Credentials (v1):
          --app-id ID               the app id (OAuth client_id, digits) accepted by the token
                                    endpoint and in /v1/APP_ID/ (default 101234567)
          --client-secret S         the app's client secret (default pushgate-mock-hms-client-secret)
          --client-secret-file FILE the same, from a file (surrounding whitespace ignored): the
                                    gateway's client_secret_file
          --write-client-secret FILE
                                    write the secret as the gateway's client_secret_file holds it
                                    (mode 0600, no trailing newline)
          --token-path PATH         path of the token endpoint (default /oauth2/v3/token)
          --token-lifetime S        expires_in of access tokens in seconds (default 3600); later v1
                                    sends with them get 401 80200003

          --listen HOST:PORT        listen address (default 127.0.0.1:8447)
          --loops N                 event-loop threads (default one per core)
          --cert FILE --key FILE    TLS certificate chain and key (PEM); default: a generated
                                    self-signed certificate for 127.0.0.1 and localhost
          --write-ca FILE           write the generated certificate (PEM) for clients to trust
                                    (the gateway's ca_file)
          --http2                   speak HTTP/2 (ALPN h2) instead of HTTP/1.1 (whether Huawei
                                    offers h2 is unverified)
          --max-streams N           with --http2: SETTINGS_MAX_CONCURRENT_STREAMS (default 100)
          --delay-ms N              wait N ms before answering each request
          --bad-tokens FILE         push tokens (one per line) refused as invalid: a send whose
                                    tokens all are gets 80300007, one with valid ones too 200
                                    80100000 with the failed tokens listed in msg
          --bad-token-prefix P      tokens starting with P are invalid too
          --bad-token-reason R      the reason v3's msg lists them under (default tokenFormatError)
          --all-invalid-status N    HTTP status of 80300007 (default 400; Huawei's is unverified,
                                    200 has been seen on v1)
          --fail-500 SHARE          answer this share (0-1) of valid sends 500 81000001 Inner Error
          --fail-503 SHARE          ... 503 with no body (Huawei's flow control)
          --retry-after S           Retry-After on 503 (default none: Huawei documents none)
          --seed N                  seed of the fault draws (default 24301)
          --goaway-after N          close each connection after N requests (HTTP/1.1: that answer
                                    says Connection: close; HTTP/2: GOAWAY after N streams)
          --stats-interval S        log a stats line to stderr every S seconds
          --stats-file FILE         write the stats as JSON (with deliveries per push token) to
                                    FILE at exit, and every --stats-interval S when given
          -h, --help                this text

        v3 sends are checked in this order: JWT (401 80200001 missing, malformed, not PS256, wrong
        kid/iss/aud or signature, iat ahead; 80300036 too long-lived; 80200005 expired), project id
        (401 80200001), push-type (400 80100001), body (400 80100001 / 80100003 / 80300010 1-1000
        tokens / 80300008 over 4096 bytes without the tokens / 80300030 a test message to over 10
        tokens), then faults, then the token rules. v1 sends: access token (401 80200003 expired or
        revoked, 80200001 unknown), app id (401 80200001), body (validate_only a boolean, message
        with exactly one of token/topic/condition, data a string, android.notification.click_action
        type 1-4), then the same. The HTTP status of each code is the mock's inference (Huawei
        documents the codes and the statuses separately). Token endpoint errors are Huawei's
        {"error":1101,"sub_error":N,…} with 400: 20002 client_id not digits, 20003 unknown
        client_id, 20171 empty secret, 12304 wrong secret. Other paths: 404. Prints final stats and
        stops on SIGINT or SIGTERM.
        """

    struct Options {
        var configuration: MockHMSConfiguration
        var writeServiceAccount: String?
        var writeClientSecret: String?
        var run = MockServerRun(name: "mock-hms")
    }

    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("mock-hms", usage: usage, arguments, parse: parse) { options in
            options.run.serve(
                host: options.configuration.host, settings: describe(options.configuration, run: options.run),
                start: { try MockHMSServer(configuration: options.configuration, group: $0) },
                ready: { _ in try writeCredentials(options) })
        }
    }

    /// The service account and the client secret; both are secrets, hence mode 0600.
    private static func writeCredentials(_ options: Options) throws {
        let configuration = options.configuration
        if let path = options.writeServiceAccount {
            try writeFile(path, configuration.serviceAccount.serialized(), mode: 0o600)
            printError(
                "mock-hms: wrote the service account to \(path) (project \(configuration.serviceAccount.projectID))")
        }
        if let path = options.writeClientSecret {
            try writeFile(path, Array(configuration.clientSecret.utf8), mode: 0o600)
            printError("mock-hms: wrote the client secret to \(path) (the gateway's client_secret_file)")
        }
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var flags = FlagReader(arguments)
        var settings: [(inout MockHMSConfiguration) throws -> Void] = []
        var serviceAccountFile: String?
        var writeServiceAccount: String?
        var writeClientSecret: String?
        var project: String?
        var run = MockServerRun(name: "mock-hms")
        while let flag = flags.next() {
            switch flag {
            case "-h", "--help": return nil
            case "--service-account": serviceAccountFile = try flags.value(for: flag)
            case "--write-service-account": writeServiceAccount = try flags.value(for: flag)
            case "--project": project = try flags.value(for: flag)
            case "--write-client-secret": writeClientSecret = try flags.value(for: flag)
            default:
                if try run.read(flag, &flags) { continue }
                if let shared: (inout MockHMSConfiguration) -> Void = try MockServerRun.setting(
                    flag, &flags, listenExample: "127.0.0.1:8447")
                {
                    settings.append(shared)
                } else {
                    settings.append(try setting(flag, &flags))
                }
            }
        }
        var configuration: MockHMSConfiguration
        switch (serviceAccountFile, writeServiceAccount) {
        case (let path?, nil):
            guard project == nil else { throw CommandLineError("--project is for a generated account") }
            configuration = try MockHMSConfiguration(
                serviceAccount: try HuaweiServiceAccount(file: path))
        case (nil, _):
            configuration = try MockHMSConfiguration.generated(projectID: project)
        default:
            throw CommandLineError("--service-account and --write-service-account exclude each other")
        }
        configuration.port = 8447
        // The command line has nobody to read recorded messages; per-token counts stay on.
        configuration.recordMessages = 0
        for apply in settings { try apply(&configuration) }
        try run.applyIdentity(to: &configuration.server)
        return Options(
            configuration: configuration, writeServiceAccount: writeServiceAccount,
            writeClientSecret: writeClientSecret, run: run)
    }

    /// A configuration change for one of mock-hms's own behaviour flags (read now, applied once
    /// the configuration exists).
    private static func setting(
        _ flag: String, _ flags: inout FlagReader
    ) throws -> (inout MockHMSConfiguration) throws -> Void {
        if let rule: (inout MockHMSConfiguration) -> Void = try MockServerRun.tokenRule(
            flag, &flags, lists: ["--bad-tokens": \.badTokens], prefixes: ["--bad-token-prefix": \.badTokenPrefix])
        {
            return rule
        }
        switch flag {
        case "--app-id":
            let id = try flags.value(for: flag)
            guard (1...64).contains(id.utf8.count), id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
                throw CommandLineError("--app-id: Huawei's app ids are 1 to 64 digits")
            }
            return { $0.appID = id }
        case "--client-secret":
            let secret = try flags.value(for: flag)
            guard !secret.isEmpty else { throw CommandLineError("--client-secret: empty") }
            return { $0.clientSecret = secret }
        case "--client-secret-file":
            let path = try flags.value(for: flag)
            let secret = String(decoding: try readFile(path), as: UTF8.self)
                .trimmingPrefix(while: \.isWhitespace).reversed().trimmingPrefix(while: \.isWhitespace).reversed()
            guard !secret.isEmpty else { throw CommandLineError("\(path): the client secret is empty") }
            return { $0.clientSecret = String(secret) }
        case "--token-path":
            let path = try flags.value(for: flag)
            guard path.hasPrefix("/") else { throw CommandLineError("--token-path: must start with /") }
            return { $0.tokenPath = path }
        case "--max-jwt-lifetime":
            let seconds = try flags.int(for: flag, range: 1...86_400 * 7)
            return { $0.maxJWTLifetime = seconds }
        case "--bad-token-reason":
            let reason = try flags.value(for: flag)
            return { $0.badTokenReason = reason }
        case "--all-invalid-status":
            let status = try flags.int(for: flag, range: 200...599)
            return { $0.allInvalidStatus = status }
        default:
            throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate mock-hms --help)")
        }
    }

    private static func describe(_ configuration: MockHMSConfiguration, run: MockServerRun) -> String {
        var parts = run.describe(configuration)
        parts += [
            "project=\(configuration.serviceAccount.projectID)", "key_id=\(configuration.serviceAccount.keyID)",
            "app_id=\(configuration.appID)", "max_jwt_lifetime=\(configuration.maxJWTLifetime)s",
        ]
        if !configuration.badTokens.isEmpty { parts.append("bad_tokens=\(configuration.badTokens.count)") }
        if let prefix = configuration.badTokenPrefix { parts.append("bad_token_prefix=\(prefix)") }
        if configuration.allInvalidStatus != 400 {
            parts.append("all_invalid_status=\(configuration.allInvalidStatus)")
        }
        return parts.joined(separator: " ")
    }
}

extension MockHMSServer: CommandLineMock {
    var about: String {
        "(a MOCK of Huawei Push Kit, for tests and load tests); url \(baseURL), token_url \(tokenURL), "
            + "project_id \(configuration.serviceAccount.projectID), app_id \(configuration.appID)"
    }
    var statsSummary: String { stats.summary }
    /// The stats as one JSON object: the shared counters, `by_status`, `by_error` (business codes),
    /// Push Kit's own, and `delivered_per_token` (accepted deliveries per push token).
    func writeStatsFile(to path: String) {
        let stats = stats
        MockCommandSupport.writeStatsJSON(
            to: path, tool: "mock-hms", counters: stats.counters,
            numbers: [
                ("v3_sends", stats.v3Sends), ("v1_sends", stats.v1Sends), ("accepted", stats.accepted),
                ("partial_successes", stats.partialSuccesses), ("validated_only", stats.validatedOnly),
                ("tokens_delivered", stats.tokensDelivered), ("tokens_refused", stats.tokensRefused),
                ("token_requests", stats.tokenRequests), ("tokens_issued", stats.tokensIssued),
            ],
            objects: [("delivered_per_token", stats.deliveredPerToken.map { ($0.key, $0.value) })])
    }
}
