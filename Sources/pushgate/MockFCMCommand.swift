import PushCommandLine
import PushCredentials
import PushMockFCM
import PushMockSupport
import PushPosix
import PushTLS

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate mock-fcm`: runs ``MockFCMServer`` until SIGINT/SIGTERM, for tests and load tests.
enum MockFCMCommand {
    static let usage = """
        Usage: pushgate mock-fcm (--service-account FILE | --write-service-account FILE) [flags]

        A MOCK of Firebase Cloud Messaging (HTTP v1) and Google's OAuth2 token endpoint over TLS +
        HTTP/2 (or HTTP/1.1 with --http1: Google's front ends speak both), for tests and load tests. Clients exchange a service-account JWT for an access
        token at POST /token, then POST /v1/projects/PROJECT/messages:send with it. Requests are
        checked and answered like FCM (error bodies with FcmError details); faults can be injected.

        Credentials (one of):
          --service-account FILE    accept assertions of this service-account JSON (its public key,
                                    client_email and project_id; its token_uri is accepted as aud)
          --write-service-account FILE
                                    generate an RSA key and write a service-account JSON whose
                                    token_uri points at this mock (mode 0600)
          --project ID              project_id of the written account (default pushgate-mock)

          --listen HOST:PORT        listen address (default 127.0.0.1:8444)
          --loops N                 event-loop threads (default one per core)
          --cert FILE --key FILE    TLS certificate chain and key (PEM); default: a generated
                                    self-signed certificate for 127.0.0.1 and localhost
          --write-ca FILE           write the generated certificate (PEM) for clients to trust
          --token-path PATH         path of the token endpoint (default /token)
          --audience URL            also accept this JWT aud (besides https://<authority><token path>)
          --token-lifetime S        expires_in of access tokens in seconds (default 3600)
          --http1                   speak HTTP/1.1 (ALPN http/1.1, keep-alive) instead of HTTP/2
          --max-streams N           SETTINGS_MAX_CONCURRENT_STREAMS (default 100)
          --delay-ms N              wait N ms before answering each request
          --unregistered FILE       tokens (one per line) answered 404 UNREGISTERED
          --unregistered-prefix P   tokens starting with P answered 404 UNREGISTERED
          --sender-mismatch FILE    tokens (one per line) answered 403 SENDER_ID_MISMATCH
          --sender-mismatch-prefix P  tokens starting with P answered 403 SENDER_ID_MISMATCH
          --invalid-tokens FILE     tokens (one per line) answered 400 INVALID_ARGUMENT (message.token)
          --unavailable-every N     answer every Nth valid send 503 UNAVAILABLE
          --fail-500 SHARE          answer this share (0-1) of valid sends 500 INTERNAL
          --fail-503 SHARE          ... 503 UNAVAILABLE
          --fail-429 SHARE          ... 429 QUOTA_EXCEEDED
          --retry-after S           Retry-After on 503 and 429 (default 1; 0 = none)
          --seed N                  seed of the fault draws (default 24301)
          --goaway-after N          GOAWAY after N streams on each connection (with --http1: that
                                    answer says Connection: close and the connection ends)
          --stats-interval S        log a stats line to stderr every S seconds
          --stats-file FILE         write the stats as JSON (with sends delivered per token) to
                                    FILE at exit, and every --stats-interval S when given
          -h, --help                this text

        A project other than the account's gets 403 PERMISSION_DENIED. Prints final stats and stops
        on SIGINT or SIGTERM.
        """

    struct Options {
        var configuration: MockFCMConfiguration
        /// The private key to write into --write-service-account FILE.
        var generatedKey: String?
        var writeServiceAccount: String?
        var run = MockServerRun(name: "mock-fcm")
    }

    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("mock-fcm", usage: usage, arguments, parse: parse) { options in
            options.run.serve(
                host: options.configuration.host, settings: describe(options.configuration, run: options.run),
                start: { try MockFCMServer(configuration: options.configuration, group: $0) },
                ready: { try writeServiceAccount(options, server: $0) })
        }
    }

    /// The generated service account, once the port is known.
    private static func writeServiceAccount(_ options: Options, server: MockFCMServer) throws {
        guard let path = options.writeServiceAccount, let key = options.generatedKey else { return }
        let account = try server.serviceAccount(privateKeyPEM: key)
        try writeFile(path, account.serialized(), mode: 0o600)  // it holds a private key
        printError("mock-fcm: wrote the service account to \(path) (project \(account.projectID))")
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var flags = FlagReader(arguments)
        var settings: [(inout MockFCMConfiguration) throws -> Void] = []
        var serviceAccount: GoogleServiceAccount?
        var writeServiceAccount: String?
        var project = "pushgate-mock"
        var run = MockServerRun(name: "mock-fcm")
        while let flag = flags.next() {
            switch flag {
            case "-h", "--help":
                return nil
            case "--service-account":
                serviceAccount = try GoogleServiceAccount(file: try flags.value(for: flag))
            case "--write-service-account":
                writeServiceAccount = try flags.value(for: flag)
            case "--project":
                project = try flags.value(for: flag)
            default:
                if try run.read(flag, &flags) { continue }
                if let shared: (inout MockFCMConfiguration) -> Void = try MockServerRun.setting(
                    flag, &flags, listenExample: "127.0.0.1:8444")
                {
                    settings.append(shared)
                } else {
                    settings.append(try setting(flag, &flags))
                }
            }
        }
        var options: Options
        switch (serviceAccount, writeServiceAccount) {
        case (let account?, nil):
            options = Options(configuration: try MockFCMConfiguration(serviceAccount: account))
        case (nil, let path?):
            let (configuration, privateKey) = try MockFCMConfiguration.generated(projectID: project)
            options = Options(configuration: configuration, generatedKey: privateKey, writeServiceAccount: path)
        case (nil, nil):
            throw CommandLineError("needs --service-account FILE or --write-service-account FILE (see --help)")
        default:
            throw CommandLineError("--service-account and --write-service-account exclude each other")
        }
        options.configuration.port = 8444
        // The command line has nobody to read recorded messages; per-token counts stay on.
        options.configuration.recordMessages = 0
        for apply in settings { try apply(&options.configuration) }
        try run.applyIdentity(to: &options.configuration.server)
        options.run = run
        return options
    }

    /// A configuration change for one of the behaviour flags (read now, applied once the
    /// configuration exists).
    private static func setting(
        _ flag: String, _ flags: inout FlagReader
    ) throws -> (inout MockFCMConfiguration) throws -> Void {
        if let rule: (inout MockFCMConfiguration) -> Void = try MockServerRun.tokenRule(
            flag, &flags,
            lists: [
                "--unregistered": \.unregisteredTokens, "--sender-mismatch": \.mismatchedSenderTokens,
                "--invalid-tokens": \.invalidTokens,
            ],
            prefixes: [
                "--unregistered-prefix": \.unregisteredPrefix, "--sender-mismatch-prefix": \.mismatchedSenderPrefix,
            ])
        {
            return rule
        }
        switch flag {
        case "--token-path":
            let path = try flags.value(for: flag)
            guard path.hasPrefix("/") else { throw CommandLineError("--token-path: must start with /") }
            return { $0.tokenPath = path }
        case "--audience":
            let audience = try flags.value(for: flag)
            return { $0.extraAudiences.insert(audience) }
        case "--unavailable-every":
            let every = try flags.int(for: flag, range: 1...Int(Int32.max))
            return { $0.unavailableEvery = every }
        case "--fail-429":
            let share = try MockCommandSupport.share(&flags, flag)
            return { $0.fail429Share = share }
        default:
            throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate mock-fcm --help)")
        }
    }

    private static func describe(_ configuration: MockFCMConfiguration, run: MockServerRun) -> String {
        var parts = run.describe(configuration)
        parts += ["project=\(configuration.projectID)", "client_email=\(configuration.clientEmail)"]
        if !configuration.extraAudiences.isEmpty { parts.append("audiences=\(configuration.extraAudiences.sorted())") }
        if configuration.fail429Share > 0 { parts.append("fail429=\(configuration.fail429Share)") }
        if let n = configuration.unavailableEvery { parts.append("unavailable_every=\(n)") }
        if !configuration.unregisteredTokens.isEmpty {
            parts.append("unregistered=\(configuration.unregisteredTokens.count)")
        }
        if let prefix = configuration.unregisteredPrefix { parts.append("unregistered_prefix=\(prefix)") }
        if !configuration.mismatchedSenderTokens.isEmpty {
            parts.append("sender_mismatch=\(configuration.mismatchedSenderTokens.count)")
        }
        if let prefix = configuration.mismatchedSenderPrefix { parts.append("sender_mismatch_prefix=\(prefix)") }
        return parts.joined(separator: " ")
    }
}

extension MockFCMServer: CommandLineMock {
    var about: String { "(a MOCK of Firebase Cloud Messaging, for tests and load tests); token endpoint \(tokenURL)" }
    var statsSummary: String { stats.summary }
    /// The stats as one JSON object: the counters, `by_status`, `by_error` and
    /// `delivered_per_token` (sends answered 200 per device token).
    func writeStatsFile(to path: String) {
        let stats = stats
        MockCommandSupport.writeStatsJSON(
            to: path, tool: "mock-fcm", counters: stats.counters,
            numbers: [
                ("sends", stats.sendRequests), ("delivered", stats.delivered), ("token_requests", stats.tokenRequests),
                ("tokens_issued", stats.tokensIssued),
            ],
            objects: [("delivered_per_token", stats.deliveredPerToken.map { ($0.key, $0.value) })])
    }
}
