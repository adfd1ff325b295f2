#if canImport(Glibc)
import Glibc
#endif
import PushMockAPNs
import PushPosix
import PushTLS

/// `pushgate mock-apns`: runs ``MockAPNsServer`` until SIGINT/SIGTERM, for tests and load tests.
enum MockAPNsCommand {
    static let usage = """
        Usage: pushgate mock-apns [flags]

        A MOCK of Apple's push service (APNs) over TLS + HTTP/2, for tests and load tests. It checks
        requests like APNs, answers like APNs, and can inject delays and faults.

          --listen HOST:PORT        listen address (default 127.0.0.1:8443)
          --loops N                 event-loop threads (default one per core)
          --cert FILE --key FILE    TLS certificate chain and key (PEM); default: a generated
                                    self-signed certificate for 127.0.0.1 and localhost
          --write-ca FILE           write the generated certificate (PEM) for clients to trust
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
          --unregistered FILE       tokens (one per line) answered 410 Unregistered
          --bad-tokens FILE         tokens (one per line) answered 400 BadDeviceToken
          --no-json-check           don't parse payloads (only size limits)
          --stats-interval S        log a stats line to stderr every S seconds
          -h, --help                this text

        Prints final stats and stops on SIGINT or SIGTERM.
        """

    static func run(_ arguments: [String]) -> Int32 {
        let options: Options
        switch MockCommandSupport.options("mock-apns", usage: usage, { try parse(arguments) }) {
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
            printError("mock-apns stats: " + server.stats.summary)
        }
        printError("mock-apns: stopping (\(signal))")
        server.close()
        group.shutdown()
        printError("mock-apns final stats: " + server.stats.summary)
        return 0
    }

    struct Options {
        var configuration = MockAPNsConfiguration.defaults
        var loops = EventLoopGroup.coreCount
        var writeCA: String?
        var statsInterval: Int?
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
                let address = try MockCommandSupport.listenAddress(try flags.value(for: flag), example: "127.0.0.1:8443")
                options.configuration.host = address.host
                options.configuration.port = address.port
            case "--loops":
                options.loops = try flags.int(for: flag, range: 1...256)
            case "--cert":
                certificate = try flags.value(for: flag)
            case "--key":
                key = try flags.value(for: flag)
            case "--write-ca":
                options.writeCA = try flags.value(for: flag)
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
                options.configuration.unregisteredTokens.formUnion(try MockCommandSupport.tokens(in: try flags.value(for: flag)))
            case "--bad-tokens":
                options.configuration.badTokens.formUnion(try MockCommandSupport.tokens(in: try flags.value(for: flag)))
            case "--no-json-check":
                options.configuration.validatePayloadJSON = false
            case "--stats-interval":
                options.statsInterval = try flags.int(for: flag, range: 1...86_400)
            default:
                throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate mock-apns --help)")
            }
        }
        switch (certificate, key) {
        case (nil, nil): break
        case let (certificate?, key?):
            options.configuration.identity = .files(certificateChain: certificate, privateKey: key)
            if options.writeCA != nil { throw CommandLineError("--write-ca: only for a generated certificate") }
        default: throw CommandLineError("--cert and --key go together")
        }
        switch (keyID, verifier) {
        case (nil, nil):
            if options.configuration.teamID != nil { throw CommandLineError("--team-id needs --key-id and a key") }
        case let (keyID?, verifier?): options.configuration.verifyTokens = [keyID: verifier]
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
        if !configuration.unregisteredTokens.isEmpty { parts.append("unregistered=\(configuration.unregisteredTokens.count)") }
        if !configuration.badTokens.isEmpty { parts.append("bad_tokens=\(configuration.badTokens.count)") }
        return parts.joined(separator: " ")
    }
}
