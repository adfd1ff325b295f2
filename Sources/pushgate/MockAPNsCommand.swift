import PushCommandLine
import PushMockAPNs
import PushMockSupport
import PushPosix
import PushTLS

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate mock-apns`: runs ``MockAPNsServer`` until SIGINT/SIGTERM, for tests and load tests.
enum MockAPNsCommand {
    static let usage = """
        Usage: pushgate mock-apns [flags]

        A MOCK of Apple's push service (APNs) over TLS + HTTP/2, for tests and load tests. It checks
        requests like APNs, answers like APNs, and can inject delays and faults.

          --listen HOST:PORT        listen address (default 127.0.0.1:8443)
          --channels-listen HOST:PORT
                                    also serve Apple's channel management API (Live Activity
                                    broadcast channels: POST/GET/DELETE /1/apps/<bundle>/channels,
                                    GET /1/apps/<bundle>/all-channels; Apple's host listens on 2196,
                                    sandbox 2195) here, with the same certificate and token checks;
                                    broadcasts (POST /4/broadcasts/apps/<bundle>) on --listen go to
                                    its channels as Apple answers: 200, 400 MissingChannelId/
                                    BadChannelId, 400 ChannelNotRegistered (an unknown channel,
                                    also for GET/DELETE), 400 BadExpirationDate (no
                                    apns-expiration, or not 0 on a policy-0 channel), 400
                                    BadPriority, 413 over 5,120 bytes; --fail-* shares apply to both
          --loops N                 event-loop threads (default one per core)
          --cert FILE --key FILE    TLS certificate chain and key (PEM); default: a generated
                                    self-signed certificate for 127.0.0.1 and localhost
          --write-ca FILE           write the generated certificate (PEM) for clients to trust
          --client-ca FILE          certificate auth as Apple's hosts do it: require a client
                                    certificate chaining to these CAs (PEM); the TLS handshake
                                    refuses any other with an alert (unknown_ca,
                                    certificate_expired, certificate_required)
          --certificate-goaway REASON
                                    with --client-ca: turn a verified certificate away as APNs
                                    does one it will not take: SETTINGS, then GOAWAY (last stream
                                    0) {"reason":"REASON"} (BadCertificate,
                                    BadCertificateEnvironment), then close
          --key-id ID               verify provider tokens (JWT) with this key ID and the key from
          --public-key FILE           a PEM public key, or
          --p8 FILE                   the .p8 private key itself
          --team-id ID              also require this team ID (iss); without --key-id any token is accepted
          --max-streams N           SETTINGS_MAX_CONCURRENT_STREAMS once authenticated (default 1000;
                                    1 until the first valid token when tokens are verified)
          --delay-ms N              wait N ms before answering each request
          --fail-500 SHARE          answer this share (0-1) of valid requests 500 InternalServerError
          --fail-503 SHARE          ... 503 ServiceUnavailable
          --fail-429 SHARE          ... 429 TooManyRequests
          --seed N                  seed of the fault draws (default 24301)
          --goaway-after N          GOAWAY (Shutdown) after N streams on each connection
          --drop-after N            close each connection abruptly after N streams
          --goaway-below-in-flight  with --goaway-after: the GOAWAY's last-stream-id is the last
                                    stream answered; streams still waiting (see --delay-ms) are
                                    refused and never answered, so the client must resend them
          --lower-streams-after N   after N streams on a connection, lower MAX_CONCURRENT_STREAMS
                                    to 1 (SETTINGS) and go on serving
          --stall-after N           after N streams on a connection, go silent: read nothing
                                    (PINGs unanswered), answer nothing, keep the socket open
          --faulty-connections K    --goaway-after, --drop-after, --lower-streams-after and
                                    --stall-after hit only the first K connections (default all)
          --expired-token-share SHARE
                                    answer this share (0-1) of valid requests 403
                                    ExpiredProviderToken, whatever their token (a token storm)
          --unregistered FILE       tokens (one per line) answered 410 Unregistered
          --bad-tokens FILE         tokens (one per line) answered 400 BadDeviceToken
          --no-json-check           don't parse payloads (only size limits)
          --stats-interval S        log a stats line to stderr every S seconds
          --stats-file FILE         write the stats as JSON (with 200s per token) to FILE at exit,
                                    and every --stats-interval S when given (replaced atomically)
          -h, --help                this text

        Prints final stats and stops on SIGINT or SIGTERM.
        """

    static func run(_ arguments: [String]) -> Int32 {
        let options: Options
        switch CommandOptions.parse("mock-apns", usage: usage, { try parse(arguments) }) {
        case .success(let parsed): options = parsed
        case .failure(let exit): return exit.code
        }
        // Block the stop signals before any thread starts, so only this thread gets them.
        let signals = MockCommandSupport.blockStopSignals()

        let group: EventLoopGroup
        let server: MockAPNsServer
        do {
            group = try EventLoopGroup(loopCount: options.loops, namePrefix: "mock-apns")
            do {
                server = try MockAPNsServer(configuration: options.configuration, group: group)
            } catch {
                group.shutdown()
                throw error
            }
        } catch {
            printError("pushgate mock-apns: cannot start: \(error)")
            return 1
        }
        let configuration = options.configuration
        printError(
            "mock-apns listening on \(configuration.host):\(server.localPort) "
                + "(a MOCK of Apple's push service, for tests and load tests)")
        if let (host, _) = configuration.channelsListen, let port = server.channelsPort {
            printError("mock-apns channel management API listening on \(host):\(port)")
        }
        if let path = options.writeCA, let pem = server.certificatePEM {
            do {
                try writeFile(path, Array(pem.utf8))
                printError("mock-apns: wrote the certificate to trust to \(path)")
            } catch {
                printError("pushgate mock-apns: \(error)")
                server.close()
                group.shutdown()
                return 1
            }
        }
        printError("mock-apns: " + describe(configuration, loops: options.loops))

        let signal = MockCommandSupport.waitForStop(signals, statsInterval: options.statsInterval) {
            let stats = server.stats
            printError("mock-apns stats: " + stats.summary)
            if let path = options.statsFile { writeStatsFile(stats, to: path) }
        }
        printError("mock-apns: stopping (\(signal))")
        server.close()
        group.shutdown()
        let stats = server.stats
        printError("mock-apns final stats: " + stats.summary)
        if let path = options.statsFile { writeStatsFile(stats, to: path) }
        return 0
    }

    struct Options {
        var configuration = MockAPNsConfiguration.defaults
        var loops = EventLoopGroup.coreCount
        var writeCA: String?
        var statsInterval: Int?
        var statsFile: String?
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> Options? {
        var flags = FlagReader(arguments)
        var options = Options()
        options.configuration.port = 8443
        // The command line has nobody to read recorded requests; per-token counts stay on.
        options.configuration.recordRequests = 0
        var certificate: String?
        var key: String?
        var keyID: String?
        var verifier: ES256Verifier?
        while let flag = flags.next() {
            switch flag {
            case "-h", "--help":
                return nil
            case "--listen":
                let address = try MockCommandSupport.listenAddress(
                    try flags.value(for: flag), example: "127.0.0.1:8443")
                options.configuration.host = address.host
                options.configuration.port = address.port
            case "--channels-listen":
                let address = try MockCommandSupport.listenAddress(
                    try flags.value(for: flag), example: "127.0.0.1:2195")
                options.configuration.channelsListen = (address.host, address.port)
            case "--loops":
                options.loops = try flags.int(for: flag, range: 1...256)
            case "--cert":
                certificate = try flags.value(for: flag)
            case "--key":
                key = try flags.value(for: flag)
            case "--write-ca":
                options.writeCA = try flags.value(for: flag)
            case "--client-ca":
                let path = try flags.value(for: flag)
                let pem = String(decoding: try readFile(path), as: UTF8.self)
                guard pem.contains("-----BEGIN CERTIFICATE-----") else {
                    throw CommandLineError("--client-ca: \(path) holds no PEM certificate")
                }
                options.configuration.clientCAPEM = pem
            case "--certificate-goaway":
                let reason = try flags.value(for: flag)
                guard !reason.isEmpty, reason.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C })
                else { throw CommandLineError("--certificate-goaway: a reason such as BadCertificate") }
                options.configuration.certificateGoAwayReason = reason
            case "--key-id":
                keyID = try flags.value(for: flag)
            case "--public-key":
                let pem = String(decoding: try readFile(try flags.value(for: flag)), as: UTF8.self)
                verifier = try ES256Verifier(publicKeyPEM: pem)
            case "--p8":
                let pem = String(decoding: try readFile(try flags.value(for: flag)), as: UTF8.self)
                verifier = try ES256Verifier(p8PEM: pem)
            case "--team-id":
                options.configuration.teamID = try flags.value(for: flag)
            case "--max-streams":
                options.configuration.maxConcurrentStreams = UInt32(try flags.int(for: flag, range: 1...1_000_000))
            case "--delay-ms":
                options.configuration.responseDelay = .milliseconds(try flags.int(for: flag, range: 0...600_000))
            case "--fail-500":
                options.configuration.fail500Share = try MockCommandSupport.share(&flags, flag)
            case "--fail-503":
                options.configuration.fail503Share = try MockCommandSupport.share(&flags, flag)
            case "--fail-429":
                options.configuration.fail429Share = try MockCommandSupport.share(&flags, flag)
            case "--seed":
                let text = try flags.value(for: flag)
                guard let seed = UInt64(text) else { throw CommandLineError("--seed: must be a non-negative integer") }
                options.configuration.faultSeed = seed
            case "--goaway-after":
                options.configuration.goAwayAfterStreams = try flags.int(for: flag, range: 1...Int(Int32.max))
            case "--drop-after":
                options.configuration.dropConnectionAfterStreams = try flags.int(for: flag, range: 1...Int(Int32.max))
            case "--unregistered":
                options.configuration.unregisteredTokens.formUnion(
                    try MockCommandSupport.tokens(in: try flags.value(for: flag)))
            case "--bad-tokens":
                options.configuration.badTokens.formUnion(try MockCommandSupport.tokens(in: try flags.value(for: flag)))
            case "--no-json-check":
                options.configuration.validatePayloadJSON = false
            case "--goaway-below-in-flight":
                options.configuration.goAwayBelowInFlight = true
            case "--lower-streams-after":
                options.configuration.lowerStreamsAfter = try flags.int(for: flag, range: 1...Int(Int32.max))
            case "--stall-after":
                options.configuration.stallAfterStreams = try flags.int(for: flag, range: 1...Int(Int32.max))
            case "--faulty-connections":
                options.configuration.faultyConnections = try flags.int(for: flag, range: 1...Int(Int32.max))
            case "--expired-token-share":
                options.configuration.expiredTokenShare = try MockCommandSupport.share(&flags, flag)
            case "--stats-file":
                options.statsFile = try flags.value(for: flag)
            case "--stats-interval":
                options.statsInterval = try flags.int(for: flag, range: 1...86_400)
            default:
                throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate mock-apns --help)")
            }
        }
        switch (certificate, key) {
        case (nil, nil): break
        case (let certificate?, let key?):
            options.configuration.identity = .files(certificateChain: certificate, privateKey: key)
            if options.writeCA != nil { throw CommandLineError("--write-ca: only for a generated certificate") }
        default: throw CommandLineError("--cert and --key go together")
        }
        if options.configuration.certificateGoAwayReason != nil && options.configuration.clientCAPEM == nil {
            throw CommandLineError("--certificate-goaway needs --client-ca FILE")
        }
        if options.configuration.goAwayBelowInFlight && options.configuration.goAwayAfterStreams == nil {
            throw CommandLineError("--goaway-below-in-flight needs --goaway-after N")
        }
        switch (keyID, verifier) {
        case (nil, nil):
            if options.configuration.teamID != nil { throw CommandLineError("--team-id needs --key-id and a key") }
        case (let keyID?, let verifier?): options.configuration.verifyTokens = [keyID: verifier]
        default: throw CommandLineError("--key-id needs --public-key or --p8 (and the other way round)")
        }
        return options
    }

    private static func describe(_ configuration: MockAPNsConfiguration, loops: Int) -> String {
        var parts = ["loops=\(loops)", "max_streams=\(configuration.maxConcurrentStreams)"]
        if configuration.verifiesTokens {
            parts.append("jwt=verify(\(configuration.verifyTokens.keys.sorted().joined(separator: ",")))")
            if let team = configuration.teamID { parts.append("team=\(team)") }
        } else {
            parts.append("jwt=accept-any")
        }
        if configuration.responseDelay > .zero { parts.append("delay=\(configuration.responseDelay)") }
        for (name, share) in [
            ("fail500", configuration.fail500Share), ("fail503", configuration.fail503Share),
            ("fail429", configuration.fail429Share),
        ] where share > 0 {
            parts.append("\(name)=\(share)")
        }
        if let n = configuration.goAwayAfterStreams { parts.append("goaway_after=\(n)") }
        if let n = configuration.dropConnectionAfterStreams { parts.append("drop_after=\(n)") }
        if configuration.goAwayBelowInFlight { parts.append("goaway_below_in_flight") }
        if let n = configuration.lowerStreamsAfter { parts.append("lower_streams_after=\(n)") }
        if let n = configuration.stallAfterStreams { parts.append("stall_after=\(n)") }
        if let n = configuration.faultyConnections { parts.append("faulty_connections=\(n)") }
        if configuration.clientCAPEM != nil { parts.append("client_certificates=required") }
        if let reason = configuration.certificateGoAwayReason { parts.append("certificate_goaway=\(reason)") }
        if configuration.expiredTokenShare > 0 { parts.append("expired_token=\(configuration.expiredTokenShare)") }
        if !configuration.unregisteredTokens.isEmpty {
            parts.append("unregistered=\(configuration.unregisteredTokens.count)")
        }
        if !configuration.badTokens.isEmpty { parts.append("bad_tokens=\(configuration.badTokens.count)") }
        return parts.joined(separator: " ")
    }
}

extension MockAPNsCommand {
    /// The stats as one JSON object (for scripts and the fault tests): the counters, `by_status`,
    /// `by_reason` and `delivered_per_token` (200s per device token).
    static func writeStatsFile(_ stats: MockAPNsStats, to path: String) {
        MockCommandSupport.writeStatsJSON(
            to: path, tool: "mock-apns",
            numbers: [
                ("requests", stats.requests), ("delivered", stats.delivered), ("streams_opened", stats.streamsOpened),
                ("streams_refused", stats.streamsRefused), ("streams_cancelled", stats.streamsCancelled),
                ("connections_opened", stats.connectionsOpened), ("connections_closed", stats.connectionsClosed),
                ("handshake_failures", stats.handshakeFailures),
                ("authenticated_connections", stats.authenticatedConnections), ("goaways_sent", stats.goAwaysSent),
                ("connections_dropped", stats.connectionsDropped), ("connections_stalled", stats.connectionsStalled),
                ("stream_limits_lowered", stats.streamLimitsLowered), ("max_in_flight", stats.maxInFlight),
                ("broadcasts", stats.broadcasts), ("channels", stats.channels),
            ],
            objects: [
                ("by_status", stats.byStatus.map { (String($0.key), $0.value) }),
                ("by_reason", stats.byReason.map { ($0.key, $0.value) }),
                ("delivered_per_token", stats.deliveredPerToken.map { ($0.key, $0.value) }),
                ("channel_requests", stats.channelRequests.map { ($0.key, $0.value) }),
            ])
    }
}
