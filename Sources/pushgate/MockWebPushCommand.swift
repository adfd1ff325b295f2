import PushCommandLine
import PushCore
import PushMockSupport
import PushMockWebPush
import PushTLS

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate mock-webpush`: runs ``MockWebPushServer`` until SIGINT/SIGTERM, for tests and load tests.
enum MockWebPushCommand {
    static let usage = """
        Usage: pushgate mock-webpush [flags]

        A MOCK of a Web Push service (RFC 8030 delivery, RFC 8291 aes128gcm messages, RFC 8292
        VAPID), shaped like Mozilla's autopush, over TLS with HTTP/2 and HTTP/1.1 chosen per
        connection by ALPN, for tests and load tests. Pushes are POSTed to the subscription's
        endpoint, https://HOST:PORT/wpush/v2/ID, checked like autopush checks them, and then
        DECRYPTED with the subscription's keys, which no real push service can do (it never holds
        the browser's private key): that is how tests see what the gateway encrypted.

        Subscriptions are derived, not stored: any ID of 1-128 characters of A-Z a-z 0-9 - _ is
        one, its private key and auth secret derived (HKDF-SHA-256) from the key seed and the ID.
        Get their PushSubscription JSON (with "private_key", for independent decryptors) from:
          POST /_mock/subscriptions   {"count":N,"prefix":"P","host":"HOST:PORT"} (all optional:
                                      1, "", the request's authority), answered with a JSON array
          --print-subscriptions N     N JSON lines on stdout at start, as the browser gives them
                              (no private_key: ready to be a gateway token)

          --listen HOST:PORT        listen address (default 127.0.0.1:8446)
          --loops N                 event-loop threads (default one per core)
          --cert FILE --key FILE    TLS certificate chain and key (PEM); default: a generated
                                    self-signed certificate for 127.0.0.1 and localhost
          --write-ca FILE           write the generated certificate (PEM) for clients to trust
          --http1-only              offer only HTTP/1.1 (ALPN http/1.1)
          --http2-only              offer only HTTP/2 (ALPN h2); default: both, h2 preferred
          --max-streams N           HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS (default 100)
          --seed HEX                the key seed, 64 hex digits (default: random, printed at
                                    start): the same seed gives the same subscriptions on every
                                    run, so a load tester's subscriber list stays valid
          --print-subscriptions N   print N new subscriptions (ids PREFIX s1 … sN, the same ids on
                                    every run) as JSON lines on stdout, then serve
          --subscription-prefix P   their id prefix (e.g. gone- with --gone-prefix gone-)
          --subscription-host H     their endpoints' authority (default: the listen address as
                                    clients on this machine reach it, e.g. 127.0.0.1:8446)
          --gone-prefix P           ids starting with P answered 410 (errno 106, unsubscribed)
          --not-found-prefix P      ids starting with P answered 404 (errno 102, unknown endpoint)
          --gone FILE               subscription ids (one per line) answered 410
          --not-found FILE          subscription ids (one per line) answered 404
          --decrypt-every N         decrypt every Nth push with a body (default 1 = all; 0 = none:
                                    pushes are accepted unread). Decrypting costs an ECDH per push;
                                    VAPID tokens are verified once per distinct token either way
          --record N                keep the last N accepted pushes for --stats-file (default 1000)
          --delay-ms N              wait N ms before answering each request
          --rate-limit-every N      answer every Nth valid push 429 with Retry-After (autopush has
                                    no such answer; RFC 8030 allows it)
          --fail-500 SHARE          answer this share (0-1) of valid pushes 500
          --fail-503 SHARE          ... 503 with Retry-After
          --retry-after S           Retry-After on 429 and 503 (default 1; 0 = none; autopush
                                    sends 120 on its 503s)
          --seed-faults N           seed of the fault draws (default 24301)
          --goaway-after N          close each connection after N requests (HTTP/1.1: that answer
                                    says Connection: close; HTTP/2: GOAWAY after N streams)
          --stats-interval S        log a stats line to stderr every S seconds
          --stats-file FILE         write the stats as JSON to FILE at exit (and every
                                    --stats-interval S): counters, by_status, by_error,
                                    vapid_tokens_by_audience and the recorded pushes (plaintext,
                                    body_base64, VAPID claims and JWT)
          -h, --help                this text

        A push is checked in autopush's order; every error has autopush's JSON shape
        {"code":…,"errno":…,"error":…,"message":…,"more_info":…}:
          404 errno 102   path not /wpush/v2/ID with a valid ID, or --not-found-prefix
          401 errno 109   Authorization is not "vapid t=JWT, k=KEY" with an ES256 JWT (header alg
                          ES256, typ JWT if present) signed by k (a 65-byte P-256 point, base64url),
                          aud the origin the request addressed (https://host[:port], no :443), exp
                          in the future and at most 24 h ahead, sub a mailto: or https: URL (autopush
                          only logs a bad sub; this mock refuses it)
          410 errno 106   --gone-prefix (with Cache-Control: max-age=86400, as autopush)
          413 errno 104   body over 4096 bytes (autopush's own limit is larger; FCM's is 4096)
          400 errno 111   TTL missing or not an integer (114: negative); TTL over 30 days is
                          capped, as autopush does, and the cap is echoed
          400 errno 110   a body without Content-Encoding: aes128gcm (autopush also takes the
                          older aesgcm; this mock refuses it). A push without a body needs none.
          400 errno 113   Topic over 32 characters or outside the base64url alphabet
          400             Urgency not very-low, low, normal or high (this mock only)
          400 errno 110   DecryptionFailed: the body does not decrypt with the subscription's
                          keys (this mock only; the message says why)
          then the injected faults (429, 500, 503), then 201 Created with
          Location: https://AUTHORITY/m/MESSAGE_ID and the TTL echoed, empty body.
        Prints final stats and stops on SIGINT or SIGTERM.
        """

    struct Options {
        var configuration: MockWebPushConfiguration
        var printSubscriptions = 0
        var subscriptionPrefix = ""
        var subscriptionHost: String?
        var run = MockServerRun(name: "mock-webpush")
    }

    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("mock-webpush", usage: usage, arguments, parse: parse) { options in
            options.run.serve(
                host: options.configuration.host, settings: describe(options.configuration, run: options.run),
                start: { try MockWebPushServer(configuration: options.configuration, group: $0) },
                ready: { try printSubscriptions(options, $0) })
        }
    }

    private static func printSubscriptions(_ options: Options, _ server: MockWebPushServer) throws {
        guard options.printSubscriptions > 0 else { return }
        let subscriptions = try server.newSubscriptions(
            count: options.printSubscriptions, prefix: options.subscriptionPrefix, host: options.subscriptionHost)
        var out: [UInt8] = []
        for subscription in subscriptions {
            out += subscription.browserJSON
            out.append(UInt8(ascii: "\n"))
        }
        // Straight to the descriptor: print's buffer would hold the lines back from a pipe.
        var offset = 0
        while offset < out.count {
            let written = out[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw CommandLineError("--print-subscriptions: cannot write to standard output")
            }
            offset += written
        }
    }

    /// `[{"id":…,"subscription":…,"ttl":…,"urgency":…,"topic":…,"vapid":{"aud","sub","exp","jwt"},
    /// "plaintext":…,"plaintext_base64":…,"body_base64":…}, …]`: `plaintext` is the text when it
    /// is UTF-8 (else null, and `plaintext_base64` set); both null when not decrypted.
    static func messagesJSON(_ messages: [MockWebPushMessage]) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: messages.count * 512 + 2)
        func optional(_ key: String, _ value: String?) {
            writer.key(key)
            if let value { writer.string(value) } else { writer.null() }
        }
        writer.beginArray()
        for message in messages {
            writer.beginObject()
            writer.key("id")
            writer.string(message.messageID)
            writer.key("subscription")
            writer.string(message.subscriptionID)
            writer.key("ttl")
            writer.int(message.ttl)
            optional("urgency", message.urgency)
            optional("topic", message.topic)
            writer.key("vapid")
            writer.beginObject()
            writer.key("aud")
            writer.string(message.vapidAudience)
            optional("sub", message.vapidSubject)
            writer.key("exp")
            writer.int(message.vapidExpiry)
            writer.key("jwt")
            writer.string(message.vapidJWT)
            writer.endObject()
            writer.key("decrypted")
            writer.bool(message.plaintext != nil)
            optional("plaintext", message.plaintextString)
            optional(
                "plaintext_base64",
                message.plaintextString == nil ? message.plaintext.map(base64Encode) : nil)
            writer.key("body_base64")
            writer.string(base64Encode(message.body))
            writer.endObject()
        }
        writer.endArray()
        return writer.bytes
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var flags = FlagReader(arguments)
        var settings: [(inout MockWebPushConfiguration) throws -> Void] = []
        var seed: MockWebPushConfiguration?
        var printCount = 0
        var prefix = ""
        var host: String?
        var run = MockServerRun(name: "mock-webpush")
        while let flag = flags.next() {
            switch flag {
            case "-h", "--help": return nil
            case "--seed":
                let text = try flags.value(for: flag)
                guard let configured = MockWebPushConfiguration(keySeedHex: text) else {
                    throw CommandLineError(
                        "--seed: expected 64 hex digits (32 bytes), got \(text.utf8.count) characters")
                }
                seed = configured
            case "--print-subscriptions": printCount = try flags.int(for: flag, range: 0...100_000)
            case "--subscription-prefix":
                prefix = try flags.value(for: flag)
                guard prefix.utf8.count <= 100, SubscriptionID.isValid(prefix + "s1") else {
                    throw CommandLineError("--subscription-prefix: at most 100 characters of A-Z a-z 0-9 - _")
                }
            case "--subscription-host":
                let value = try flags.value(for: flag)
                guard !value.isEmpty, !value.contains("/"), !value.contains(" ") else {
                    throw CommandLineError("--subscription-host: expected HOST[:PORT], e.g. localhost:8446")
                }
                host = value
            default:
                if try run.read(flag, &flags) { continue }
                if let shared: (inout MockWebPushConfiguration) -> Void = try MockServerRun.connectionSetting(
                    flag, &flags, listenExample: "127.0.0.1:8446")
                {
                    settings.append(shared)
                } else if let fault: (inout MockWebPushConfiguration) -> Void = try MockServerRun.faultSetting(
                    flag, &flags)
                {
                    settings.append(fault)
                } else {
                    settings.append(try setting(flag, &flags))
                }
            }
        }
        var configuration = try seed ?? MockWebPushConfiguration.generated()
        configuration.port = 8446
        for apply in settings { try apply(&configuration) }
        try run.applyIdentity(to: &configuration.server)
        return Options(
            configuration: configuration, printSubscriptions: printCount, subscriptionPrefix: prefix,
            subscriptionHost: host, run: run)
    }

    /// A configuration change for one of mock-webpush's own behaviour flags.
    private static func setting(
        _ flag: String, _ flags: inout FlagReader
    ) throws -> (inout MockWebPushConfiguration) throws -> Void {
        switch flag {
        case "--http1-only":
            return {
                $0.offersBothVersions = false
                $0.http1 = true
            }
        case "--http2-only":
            return {
                $0.offersBothVersions = false
                $0.http1 = false
            }
        case "--gone-prefix":
            let prefix = try idPrefix(flag, &flags)
            return { $0.gonePrefix = prefix }
        case "--not-found-prefix":
            let prefix = try idPrefix(flag, &flags)
            return { $0.notFoundPrefix = prefix }
        case "--gone":
            let ids = try MockCommandSupport.tokens(in: try flags.value(for: flag))
            return { $0.goneIDs.formUnion(ids) }
        case "--not-found":
            let ids = try MockCommandSupport.tokens(in: try flags.value(for: flag))
            return { $0.notFoundIDs.formUnion(ids) }
        case "--decrypt-every":
            let every = try flags.int(for: flag, range: 0...Int(Int32.max))
            return { $0.decryptEvery = every }
        case "--record":
            let count = try flags.int(for: flag, range: 0...1_000_000)
            return { $0.recordMessages = count }
        case "--rate-limit-every":
            let every = try flags.int(for: flag, range: 1...Int(Int32.max))
            return { $0.rateLimitEvery = every }
        case "--seed-faults":
            let text = try flags.value(for: flag)
            guard let seed = UInt64(text) else {
                throw CommandLineError("--seed-faults: must be a non-negative integer")
            }
            return { $0.faultSeed = seed }
        default:
            throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate mock-webpush --help)")
        }
    }

    private static func idPrefix(_ flag: String, _ flags: inout FlagReader) throws -> String {
        let prefix = try flags.value(for: flag)
        guard SubscriptionID.isValid(prefix) else {
            throw CommandLineError("\(flag): 1 to 128 characters of A-Z a-z 0-9 - _")
        }
        return prefix
    }

    private static func describe(_ configuration: MockWebPushConfiguration, run: MockServerRun) -> String {
        let http = configuration.offersBothVersions ? "2+1.1" : configuration.http1 ? "1.1" : "2"
        var parts = [
            "loops=\(run.loops)", "http=\(http)", "max_streams=\(configuration.maxConcurrentStreams)",
            "seed=\(configuration.keySeedHex)", "decrypt_every=\(configuration.decryptEvery)",
        ]
        parts += run.describeFaults(configuration)
        if let n = configuration.rateLimitEvery { parts.append("rate_limit_every=\(n)") }
        if let n = configuration.goAwayAfterStreams { parts.append("goaway_after=\(n)") }
        if let prefix = configuration.gonePrefix { parts.append("gone_prefix=\(prefix)") }
        if let prefix = configuration.notFoundPrefix { parts.append("not_found_prefix=\(prefix)") }
        if !configuration.goneIDs.isEmpty { parts.append("gone_ids=\(configuration.goneIDs.count)") }
        if !configuration.notFoundIDs.isEmpty { parts.append("not_found_ids=\(configuration.notFoundIDs.count)") }
        return parts.joined(separator: " ")
    }
}

extension MockWebPushServer: CommandLineMock {
    var about: String {
        "(a MOCK of a Web Push service, for tests and load tests); endpoints \(baseURL)/wpush/v2/ID, "
            + "subscriptions from POST \(baseURL)/_mock/subscriptions"
    }
    var statsSummary: String { stats.summary }
    /// The stats as one JSON object: the shared counters, `by_status`, `by_error`,
    /// `vapid_tokens_by_audience` and `messages` (the recorded pushes, oldest first).
    func writeStatsFile(to path: String) {
        let stats = stats
        MockCommandSupport.writeStatsJSON(
            to: path, tool: "mock-webpush", counters: stats.counters,
            numbers: [
                ("pushes", stats.pushRequests), ("delivered", stats.delivered), ("decrypted", stats.decrypted),
                ("subscriptions_issued", stats.subscriptionsIssued),
            ],
            objects: [("vapid_tokens_by_audience", stats.vapidTokensByAudience.map { ($0.key, $0.value) })],
            raw: [("messages", MockWebPushCommand.messagesJSON(stats.recentMessages))])
    }
}
