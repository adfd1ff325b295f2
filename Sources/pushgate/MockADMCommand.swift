import PushCommandLine
import PushMockADM
import PushMockSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate mock-adm`: runs ``MockADMServer`` until SIGINT/SIGTERM, for tests and load tests.
enum MockADMCommand {
    static let usage = """
        Usage: pushgate mock-adm [credentials] [flags]

        A MOCK of Amazon Device Messaging (ADM) and its Login-with-Amazon token endpoint over TLS +
        HTTP/1.1 (keep-alive, ALPN http/1.1), as Amazon speaks it, for tests and load tests. Clients exchange their client credentials for an access
        token at POST /auth/o2/token (grant_type=client_credentials, scope=messaging:push), then
        POST /messaging/registrations/ID/messages with it. Requests are checked and answered like
        ADM ({"registrationID":…} or {"reason":…}); faults can be injected.

        Credentials: given, or generated when none are given (then write them out).
          --client-id ID            the client_id to accept (with --client-secret-file; alone, a
                                    secret is generated for it)
          --client-secret-file FILE the client_secret to accept: the file's text, surrounding
                                    whitespace ignored. Same meaning as the gateway's ADM app
                                    keys client_id and client_secret_file, so both can be given
                                    the same values.
          --credentials FILE        the pair as JSON: {"client_id":"…","client_secret":"…"}
          --write-credentials FILE  write the pair in that JSON form (mode 0600)
          --write-client-secret FILE
                                    write only the secret, as the gateway's client_secret_file
                                    holds it (mode 0600, no trailing newline)

          --listen HOST:PORT        listen address (default 127.0.0.1:8445)
          --loops N                 event-loop threads (default one per core)
          --cert FILE --key FILE    TLS certificate chain and key (PEM); default: a generated
                                    self-signed certificate for 127.0.0.1 and localhost
          --write-ca FILE           write the generated certificate (PEM) for clients to trust
                                    (the gateway's ca_file)
          --token-path PATH         path of the token endpoint (default /auth/o2/token; matched
                                    without regard to case)
          --token-lifetime S        expires_in of access tokens in seconds (default 3600); later
                                    sends with them get 401 AccessTokenExpired
          --http2                   speak HTTP/2 (ALPN h2) instead of HTTP/1.1
          --max-streams N           with --http2: SETTINGS_MAX_CONCURRENT_STREAMS (default 100)
          --delay-ms N              wait N ms before answering each request
          --unregistered FILE       registration ids (one per line) answered 410 Unregistered
          --unregistered-prefix P   ids starting with P answered 410 Unregistered
          --invalid FILE            ids (one per line) answered 400 InvalidRegistrationId
          --invalid-prefix P        ids starting with P answered 400 InvalidRegistrationId
          --canonical FILE          replaced ids: lines "OLD NEW"; a send to OLD is delivered and
                                    answered {"registrationID":"NEW"}
          --canonical-prefix P      ids starting with P are replaced too: P removed, "-canonical"
                                    appended (P=old- : old-abc answers abc-canonical)
          --rate-limit-every N      answer every Nth valid send 429 MaxRateExceeded
          --fail-500 SHARE          answer this share (0-1) of valid sends 500 InternalServerError
          --fail-503 SHARE          ... 503 ServiceUnavailable
          --retry-after S           Retry-After on 429 and 503 (default 1; 0 = none)
          --seed N                  seed of the fault draws (default 24301)
          --goaway-after N          close each connection after N requests (HTTP/1.1: that answer
                                    says Connection: close; HTTP/2: GOAWAY after N streams)
          --stats-interval S        log a stats line to stderr every S seconds
          --stats-file FILE         write the stats as JSON to FILE at exit, and every
                                    --stats-interval S when given
          -h, --help                this text

        Sends are checked in this order: access token (401 AccessTokenExpired), X-Amzn-Type-Version
        and X-Amzn-Accept-Type (400 InvalidTypeVersion / InvalidAcceptType, this mock's own
        reasons), size over 6144 bytes (413 MessageTooLarge), body (400 InvalidData,
        InvalidConsolidationKey, InvalidExpiration, InvalidChecksum), injected faults, then the id
        rules above. Every send answer carries x-amzn-requestid. Prints final stats and stops on
        SIGINT or SIGTERM.
        """

    struct Options {
        var configuration: MockADMConfiguration
        var writeCredentials: String?
        var writeClientSecret: String?
        var run = MockServerRun(name: "mock-adm")
    }

    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("mock-adm", usage: usage, arguments, parse: parse) { options in
            options.run.serve(
                host: options.configuration.host, settings: describe(options.configuration, run: options.run),
                start: { try MockADMServer(configuration: options.configuration, group: $0) },
                ready: { _ in try writeCredentials(options) })
        }
    }

    /// The credentials files; both hold the secret, hence mode 0600.
    private static func writeCredentials(_ options: Options) throws {
        let credentials = options.configuration.credentials
        if let path = options.writeCredentials {
            try writeFile(path, credentials.json, mode: 0o600)
            printError("mock-adm: wrote the client credentials (JSON) to \(path)")
        }
        if let path = options.writeClientSecret {
            try writeFile(path, Array(credentials.clientSecret.utf8), mode: 0o600)
            printError("mock-adm: wrote the client secret to \(path) (the gateway's client_secret_file)")
        }
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var flags = FlagReader(arguments)
        var settings: [(inout MockADMConfiguration) throws -> Void] = []
        var clientID: String?
        var secretFile: String?
        var credentialsFile: String?
        var writeCredentials: String?
        var writeClientSecret: String?
        var run = MockServerRun(name: "mock-adm")
        while let flag = flags.next() {
            switch flag {
            case "-h", "--help": return nil
            case "--client-id": clientID = try flags.value(for: flag)
            case "--client-secret-file": secretFile = try flags.value(for: flag)
            case "--credentials": credentialsFile = try flags.value(for: flag)
            case "--write-credentials": writeCredentials = try flags.value(for: flag)
            case "--write-client-secret": writeClientSecret = try flags.value(for: flag)
            default:
                if try run.read(flag, &flags) { continue }
                if let shared: (inout MockADMConfiguration) -> Void = try MockServerRun.setting(
                    flag, &flags, listenExample: "127.0.0.1:8445")
                {
                    settings.append(shared)
                } else {
                    settings.append(try setting(flag, &flags))
                }
            }
        }
        let given = try credentials(clientID: clientID, secretFile: secretFile, credentialsFile: credentialsFile)
        if given == nil, writeCredentials == nil, writeClientSecret == nil {
            throw CommandLineError(
                "generated credentials must be written out for clients: add --write-credentials FILE or "
                    + "--write-client-secret FILE, or give --client-id ID --client-secret-file FILE (see --help)")
        }
        var options = Options(
            configuration: try given.map(MockADMConfiguration.init(credentials:))
                ?? MockADMConfiguration.generated(clientID: clientID),
            writeCredentials: writeCredentials, writeClientSecret: writeClientSecret)
        options.configuration.port = 8445
        // The command line has nobody to read recorded messages.
        options.configuration.recordMessages = 0
        for apply in settings { try apply(&options.configuration) }
        try run.applyIdentity(to: &options.configuration.server)
        options.run = run
        return options
    }

    /// The credentials the flags give, or nil when they are to be generated.
    private static func credentials(
        clientID: String?, secretFile: String?, credentialsFile: String?
    ) throws -> MockADMCredentials? {
        if let path = credentialsFile {
            guard clientID == nil, secretFile == nil else {
                throw CommandLineError("--credentials excludes --client-id and --client-secret-file")
            }
            guard let credentials = MockADMCredentials(json: try readFile(path)) else {
                throw CommandLineError("\(path): expected {\"client_id\":\"…\",\"client_secret\":\"…\"}")
            }
            return credentials
        }
        guard let path = secretFile else { return nil }
        guard let clientID else { throw CommandLineError("--client-secret-file needs --client-id") }
        let secret = String(decoding: try readFile(path), as: UTF8.self)
            .trimmingPrefix(while: \.isWhitespace).reversed().trimmingPrefix(while: \.isWhitespace).reversed()
        guard !secret.isEmpty else { throw CommandLineError("\(path): the client secret is empty") }
        return MockADMCredentials(clientID: clientID, clientSecret: String(secret))
    }

    /// A configuration change for one of mock-adm's own behaviour flags (read now, applied once
    /// the configuration exists).
    private static func setting(
        _ flag: String, _ flags: inout FlagReader
    ) throws -> (inout MockADMConfiguration) throws -> Void {
        if let rule: (inout MockADMConfiguration) -> Void = try MockServerRun.tokenRule(
            flag, &flags, lists: ["--unregistered": \.unregisteredIDs, "--invalid": \.invalidIDs],
            prefixes: [
                "--unregistered-prefix": \.unregisteredPrefix, "--invalid-prefix": \.invalidPrefix,
                "--canonical-prefix": \.canonicalPrefix,
            ])
        {
            return rule
        }
        switch flag {
        case "--token-path":
            let path = try flags.value(for: flag)
            guard path.hasPrefix("/") else { throw CommandLineError("--token-path: must start with /") }
            return { $0.tokenPath = path }
        case "--canonical":
            let pairs = try canonicalPairs(in: try flags.value(for: flag))
            return { $0.canonicalIDs.merge(pairs) { _, new in new } }
        case "--rate-limit-every":
            let every = try flags.int(for: flag, range: 1...Int(Int32.max))
            return { $0.rateLimitEvery = every }
        default:
            throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate mock-adm --help)")
        }
    }

    /// `OLD NEW` lines (blank lines and `#` comments skipped).
    static func canonicalPairs(in path: String) throws -> [String: String] {
        var pairs: [String: String] = [:]
        for line in try MockCommandSupport.tokens(in: path) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count == 2 else {
                throw CommandLineError("\(path): expected lines \"OLD NEW\", got \(line.debugDescription)")
            }
            pairs[String(fields[0])] = String(fields[1])
        }
        return pairs
    }

    private static func describe(_ configuration: MockADMConfiguration, run: MockServerRun) -> String {
        var parts = run.describe(configuration)
        if let n = configuration.rateLimitEvery { parts.append("rate_limit_every=\(n)") }
        if !configuration.unregisteredIDs.isEmpty {
            parts.append("unregistered=\(configuration.unregisteredIDs.count)")
        }
        if let prefix = configuration.unregisteredPrefix { parts.append("unregistered_prefix=\(prefix)") }
        if !configuration.invalidIDs.isEmpty { parts.append("invalid=\(configuration.invalidIDs.count)") }
        if let prefix = configuration.invalidPrefix { parts.append("invalid_prefix=\(prefix)") }
        if !configuration.canonicalIDs.isEmpty { parts.append("canonical=\(configuration.canonicalIDs.count)") }
        if let prefix = configuration.canonicalPrefix { parts.append("canonical_prefix=\(prefix)") }
        return parts.joined(separator: " ")
    }
}

extension MockADMServer: CommandLineMock {
    var about: String {
        "(a MOCK of Amazon Device Messaging, for tests and load tests); url \(baseURL), token_url \(tokenURL), "
            + "client_id \(configuration.credentials.clientID)"
    }
    var statsSummary: String { stats.summary }
    /// The stats as one JSON object: the shared counters, `by_status`, `by_error`, and ADM's own.
    func writeStatsFile(to path: String) {
        let stats = stats
        MockCommandSupport.writeStatsJSON(
            to: path, tool: "mock-adm", counters: stats.counters,
            numbers: [
                ("sends", stats.sendRequests), ("delivered", stats.delivered), ("canonical_ids", stats.canonicalIDs),
                ("token_requests", stats.tokenRequests), ("tokens_issued", stats.tokensIssued),
            ],
            objects: [])
    }
}
