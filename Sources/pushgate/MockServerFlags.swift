import PushCommandLine
import PushMockADM
import PushMockFCM
import PushMockSupport
import PushMockWebPush
import PushPosix

#if canImport(Glibc)
    import Glibc
#endif

/// The injected faults mock-fcm, mock-adm and mock-webpush share: `--fail-500`, `--fail-503` and
/// `--retry-after` set these members, whichever mock they configure.
protocol MockFaultFlags: MockServerConfiguration {
    var fail500Share: Double { get set }
    var fail503Share: Double { get set }
    var retryAfterSeconds: Int? { get set }
}

/// What mock-fcm and mock-adm configurations share beyond ``MockServerSettings`` and the faults:
/// the flags below set these members, whichever mock they configure.
protocol MockServerFlags: MockFaultFlags {
    var accessTokenLifetime: Int { get set }
    var faultSeed: UInt64 { get set }
}

extension MockFCMConfiguration: MockServerFlags {}
extension MockADMConfiguration: MockServerFlags {}
extension MockWebPushConfiguration: MockFaultFlags {}

/// The command-line side of a request/response mock (mock-fcm, mock-adm): the flags that
/// configure no server member, and running the server until SIGINT/SIGTERM.
struct MockServerRun {
    /// The command's name (`mock-adm`), for messages.
    let name: String
    var loops = EventLoopGroup.coreCount
    var certificate: String?
    var key: String?
    var writeCA: String?
    var statsInterval: Int?
    var statsFile: String?

    init(name: String) { self.name = name }

    /// Reads `flag` when it is one of these (`--loops`, `--cert`, `--key`, `--write-ca`,
    /// `--stats-interval`, `--stats-file`); false for any other.
    mutating func read(_ flag: String, _ flags: inout FlagReader) throws -> Bool {
        switch flag {
        case "--loops": loops = try flags.int(for: flag, range: 1...256)
        case "--cert": certificate = try flags.value(for: flag)
        case "--key": key = try flags.value(for: flag)
        case "--write-ca": writeCA = try flags.value(for: flag)
        case "--stats-interval": statsInterval = try flags.int(for: flag, range: 1...86_400)
        case "--stats-file": statsFile = try flags.value(for: flag)
        default: return false
        }
        return true
    }

    /// The TLS identity of `--cert`/`--key` (a generated one when neither is given).
    func applyIdentity(to settings: inout MockServerSettings) throws {
        switch (certificate, key) {
        case (nil, nil): break
        case (let certificate?, let key?):
            settings.identity = .files(certificateChain: certificate, privateKey: key)
            if writeCA != nil { throw CommandLineError("--write-ca: only for a generated certificate") }
        default: throw CommandLineError("--cert and --key go together")
        }
    }

    /// A configuration change for one of the shared behaviour flags (read now, applied once the
    /// configuration exists), or nil when `flag` is not one of them.
    static func setting<Configuration: MockServerFlags>(
        _ flag: String, _ flags: inout FlagReader, listenExample: String
    ) throws -> ((inout Configuration) -> Void)? {
        if let change: (inout Configuration) -> Void = try connectionSetting(
            flag, &flags, listenExample: listenExample)
        {
            return change
        }
        if let change: (inout Configuration) -> Void = try faultSetting(flag, &flags) { return change }
        switch flag {
        case "--http1":
            return { $0.http1 = true }
        case "--http2":
            return { $0.http1 = false }
        case "--token-lifetime":
            let seconds = try flags.int(for: flag, range: 1...86_400)
            return { $0.accessTokenLifetime = seconds }
        case "--seed":
            let text = try flags.value(for: flag)
            guard let seed = UInt64(text) else { throw CommandLineError("--seed: must be a non-negative integer") }
            return { $0.faultSeed = seed }
        default:
            return nil
        }
    }

    /// `--listen`, `--max-streams`, `--delay-ms`, `--goaway-after`: the listener and connection
    /// flags of every request/response mock; nil for another flag.
    static func connectionSetting<Configuration: MockServerConfiguration>(
        _ flag: String, _ flags: inout FlagReader, listenExample: String
    ) throws -> ((inout Configuration) -> Void)? {
        switch flag {
        case "--listen":
            let address = try MockCommandSupport.listenAddress(try flags.value(for: flag), example: listenExample)
            return {
                $0.host = address.host
                $0.port = address.port
            }
        case "--max-streams":
            let streams = UInt32(try flags.int(for: flag, range: 1...1_000_000))
            return { $0.maxConcurrentStreams = streams }
        case "--delay-ms":
            let delay = Duration.milliseconds(try flags.int(for: flag, range: 0...600_000))
            return { $0.responseDelay = delay }
        case "--goaway-after":
            let streams = try flags.int(for: flag, range: 1...Int(Int32.max))
            return { $0.goAwayAfterStreams = streams }
        default:
            return nil
        }
    }

    /// A token-list flag (`--unregistered FILE`: the file's tokens join the set `lists` names for
    /// it) or a token-prefix flag (`--unregistered-prefix P`); nil for another flag.
    static func tokenRule<Configuration>(
        _ flag: String, _ flags: inout FlagReader, lists: [String: WritableKeyPath<Configuration, Set<String>>],
        prefixes: [String: WritableKeyPath<Configuration, String?>]
    ) throws -> ((inout Configuration) -> Void)? {
        if let list = lists[flag] {
            let tokens = try MockCommandSupport.tokens(in: try flags.value(for: flag))
            return { $0[keyPath: list].formUnion(tokens) }
        }
        if let prefix = prefixes[flag] {
            let value = try flags.value(for: flag)
            return { $0[keyPath: prefix] = value }
        }
        return nil
    }

    /// `--fail-500`, `--fail-503`, `--retry-after`; nil for another flag.
    static func faultSetting<Configuration: MockFaultFlags>(
        _ flag: String, _ flags: inout FlagReader
    ) throws -> ((inout Configuration) -> Void)? {
        switch flag {
        case "--fail-500":
            let share = try MockCommandSupport.share(&flags, flag)
            return { $0.fail500Share = share }
        case "--fail-503":
            let share = try MockCommandSupport.share(&flags, flag)
            return { $0.fail503Share = share }
        case "--retry-after":
            let seconds = try flags.int(for: flag, range: 0...86_400)
            return { $0.retryAfterSeconds = seconds == 0 ? nil : seconds }
        default:
            return nil
        }
    }

    /// `loops=… max_streams=… token_lifetime=…s` and the shared settings that are not defaults.
    func describe(_ configuration: some MockServerFlags) -> [String] {
        var parts = [
            "loops=\(loops)", "http=\(configuration.http1 ? "1.1" : "2")",
            "max_streams=\(configuration.maxConcurrentStreams)",
            "token_lifetime=\(configuration.accessTokenLifetime)s",
        ]
        parts += describeFaults(configuration)
        if let n = configuration.goAwayAfterStreams { parts.append("goaway_after=\(n)") }
        return parts
    }

    /// `delay=… fail500=… fail503=…`, the ones that are set.
    func describeFaults(_ configuration: some MockFaultFlags) -> [String] {
        var parts: [String] = []
        if configuration.responseDelay > .zero { parts.append("delay=\(configuration.responseDelay)") }
        if configuration.fail500Share > 0 { parts.append("fail500=\(configuration.fail500Share)") }
        if configuration.fail503Share > 0 { parts.append("fail503=\(configuration.fail503Share)") }
        return parts
    }

    /// Starts the server on its own loops, announces it (`<name> listening on HOST:PORT` and its
    /// ``CommandLineMock/about``), calls `ready` (write files), logs `settings`, then waits for SIGINT/SIGTERM,
    /// logging the stats line (and writing `--stats-file`) every `statsInterval` and at the end.
    /// The exit status.
    func serve<Server: CommandLineMock>(
        host: String, settings: String, start: (EventLoopGroup) throws -> Server,
        ready: (Server) throws -> Void = { _ in }
    ) -> Int32 {
        // Block the stop signals before any thread starts, so only this thread gets them.
        let signals = MockCommandSupport.blockStopSignals()
        let group: EventLoopGroup
        let server: Server
        do {
            group = try EventLoopGroup(loopCount: loops, namePrefix: name)
            do {
                server = try start(group)
            } catch {
                group.shutdown()
                throw error
            }
        } catch {
            printError("pushgate \(name): cannot start: \(error)")
            return 1
        }
        do {
            // Before the server is announced: a client that waits for that line finds the file.
            if let path = writeCA, let pem = server.certificatePEM {
                try writeFile(path, Array(pem.utf8))
                printError("\(name): wrote the certificate to trust to \(path)")
            }
            printError("\(name) listening on \(host):\(server.localPort) " + server.about)
            try ready(server)
            printError("\(name): " + settings)
        } catch {
            printError("pushgate \(name): \(error)")
            server.close()
            group.shutdown()
            return 1
        }
        let signal = MockCommandSupport.waitForStop(signals, statsInterval: statsInterval) {
            printError("\(name) stats: " + server.statsSummary)
            if let statsFile { server.writeStatsFile(to: statsFile) }
        }
        printError("\(name): stopping (\(signal))")
        server.close()
        group.shutdown()
        printError("\(name) final stats: " + server.statsSummary)
        if let statsFile { server.writeStatsFile(to: statsFile) }
        return 0
    }
}

/// A request/response mock server as its command runs it (``MockServerRun/serve(host:settings:start:ready:)``).
protocol CommandLineMock {
    /// The certificate clients should trust (PEM), when it was generated (`--write-ca`).
    var certificatePEM: String? { get }
    var localPort: Int { get }
    /// What the announcement says after `listening on HOST:PORT`: what it mocks, where to reach it.
    var about: String { get }
    /// The stats line logged every `--stats-interval` and at the end.
    var statsSummary: String { get }
    /// Writes the stats as JSON (`--stats-file`).
    func writeStatsFile(to path: String)
    func close()
}
