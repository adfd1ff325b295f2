import PushCommandLine
import PushGateway

#if canImport(Glibc)
    import Glibc
#endif

/// `pushgate serve`: reads the config, applies flags, runs until SIGINT/SIGTERM.
enum ServeCommand {
    static func run(_ arguments: [String]) -> Int32 {
        CommandOptions.run("serve", usage: Usage.serve, arguments, parse: parse) { configuration in
            serve(configuration, arguments: arguments)
        }
    }

    /// Runs until SIGINT or SIGTERM; on SIGHUP reads `arguments` (the config file and flags) again.
    private static func serve(_ configuration: GatewayConfiguration, arguments: [String]) -> Int32 {
        // Block the stop signals before any thread starts, so every thread inherits the mask and
        // only this thread receives them, through sigwait.
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let log = Log(level: configuration.logLevel)
        let started: Result<Gateway, any Error> = runBlocking {
            do {
                return .success(
                    try await Gateway.start(configuration: configuration, log: log, demo: DemoProvider.mode))
            } catch {
                return .failure(error)
            }
        }
        guard case .success(let gateway) = started else {
            if case .failure(let error) = started { log.error("cannot start", ["error": "\(error)"]) }
            return 1
        }
        while true {
            var received: Int32 = 0
            guard sigwait(&signals, &received) == 0 else { continue }
            if received == SIGHUP {
                // Read the config file and flags again; apps and API keys change without a restart.
                do {
                    guard let reloaded = try parse(arguments) else { continue }
                    _ = runBlocking { await gateway.reload(reloaded) }
                } catch {
                    log.error("reload refused; the running configuration stays", ["error": "\(error)"])
                }
                continue
            }
            log.info("stopping", ["signal": received == SIGINT ? "SIGINT" : "SIGTERM"])
            runBlocking { await gateway.stop() }
            log.info("stopped")
            return 0
        }
    }

    /// nil when --help was asked for.
    static func parse(_ arguments: [String]) throws -> GatewayConfiguration? {
        var flags = FlagReader(arguments)
        var configuration = GatewayConfiguration()
        var overrides: [(inout GatewayConfiguration) throws -> Void] = []
        while let flag = flags.next() {
            switch flag {
            case "-h", "--help":
                return nil
            case "--config":
                let path = try flags.value(for: flag)
                configuration = try GatewayConfiguration.parse(json: try readFile(path))
            case "--listen":
                let value = try flags.value(for: flag)
                overrides.append { try $0.setListen(value) }
            case "--metrics-listen":
                let value = try flags.value(for: flag)
                overrides.append { try $0.setMetricsListen(value) }
            case "--loops":
                let value = try flags.int(for: flag, range: 1...256)
                overrides.append { $0.loops = value }
            case "--max-message-bytes":
                let value = try flags.int(for: flag, range: 1024...(64 << 20))
                overrides.append { $0.maxMessageBytes = value }
            case "--store":
                let path = try flags.value(for: flag)
                guard !path.isEmpty else { throw CommandLineError("--store: must not be empty") }
                overrides.append { $0.storePath = path }
            case "--tls-cert-file":
                let path = try flags.value(for: flag)
                overrides.append { $0.security.tlsCertFile = path }
            case "--tls-key-file":
                let path = try flags.value(for: flag)
                overrides.append { $0.security.tlsKeyFile = path }
            case "--client-ca-file":
                let path = try flags.value(for: flag)
                overrides.append { $0.security.clientCAFile = path }
            case "--allow-insecure":
                overrides.append { $0.security.allowInsecure = true }
            case "--no-demo":
                overrides.append { $0.demoWhenNoApps = false }
            case "--log-level":
                let value = try flags.value(for: flag)
                guard let level = ["debug": LogLevel.debug, "info": .info, "warning": .warning, "error": .error][value]
                else { throw CommandLineError("--log-level: must be debug, info, warning or error") }
                overrides.append { $0.logLevel = level }
            default:
                throw CommandLineError("unknown flag \(flag.debugDescription) (see pushgate serve --help)")
            }
        }
        for override in overrides { try override(&configuration) }
        return configuration
    }
}
