import PushGateway
import PushTestSupport
import Testing

@testable import pushgate

@Suite("serve flags")
struct ServeCommandTests {
    private func parse(_ arguments: [String]) throws -> GatewayConfiguration {
        try #require(try ServeCommand.parse(arguments))
    }

    @Test("--help gives the message limit the configuration has by default")
    func helpGivesTheRealDefault() {
        #expect(Usage.serve.contains("default \(GatewayConfiguration().maxMessageBytes))"))
        #expect(Usage.serve.contains("default 16777216)"))
    }

    @Test("no flags: the configuration's defaults")
    func defaults() throws {
        let configuration = try parse([])
        let defaults = GatewayConfiguration()
        #expect(configuration.listenHost == "127.0.0.1" && configuration.listenPort == 50051)
        #expect(configuration.loops == defaults.loops)
        #expect(configuration.maxMessageBytes == defaults.maxMessageBytes)
        #expect(configuration.storePath == "./pushgate.db")
        #expect(configuration.logLevel == .info)
        #expect(configuration.metricsListen == nil)
        #expect(configuration.demoWhenNoApps)
        #expect(!configuration.security.allowInsecure && !configuration.security.tlsEnabled)
        #expect(configuration.apps.isEmpty)
    }

    @Test(
        "-h and --help ask for the usage",
        arguments: [["-h"], ["--help"], ["--loops", "2", "--help"], ["--help", "--no-such-flag"]])
    func help(arguments: [String]) throws {
        #expect(try ServeCommand.parse(arguments) == nil)
        #expect(Usage.serve.contains("--metrics-listen ADDR"))
    }

    @Test("every flag lands in its configuration member")
    func everyFlag() throws {
        let configuration = try parse([
            "--listen", "0.0.0.0:6000", "--metrics-listen", "127.0.0.1:9464", "--loops", "3", "--max-message-bytes",
            "2048", "--store", "postgres://db/pushgate", "--tls-cert-file", "/etc/cert.pem", "--tls-key-file",
            "/etc/key.pem", "--client-ca-file", "/etc/ca.pem", "--allow-insecure", "--no-demo", "--log-level", "debug",
        ])
        #expect(configuration.listenHost == "0.0.0.0")
        #expect(configuration.listenPort == 6000)
        #expect(configuration.metricsListen?.host == "127.0.0.1")
        #expect(configuration.metricsListen?.port == 9464)
        #expect(configuration.loops == 3)
        #expect(configuration.maxMessageBytes == 2048)
        #expect(configuration.storePath == "postgres://db/pushgate")
        #expect(configuration.security.tlsCertFile == "/etc/cert.pem")
        #expect(configuration.security.tlsKeyFile == "/etc/key.pem")
        #expect(configuration.security.clientCAFile == "/etc/ca.pem")
        #expect(configuration.security.allowInsecure)
        #expect(!configuration.demoWhenNoApps)
        #expect(configuration.logLevel == .debug)
    }

    @Test("--flag=value reads like --flag value; IPv6 listen addresses lose their brackets")
    func equalsForm() throws {
        let configuration = try parse(["--listen=[::1]:7000", "--log-level=error", "--metrics-listen="])
        #expect(configuration.listenHost == "::1")
        #expect(configuration.listenPort == 7000)
        #expect(configuration.logLevel == .error)
        #expect(configuration.metricsListen == nil, "an empty metrics address turns metrics off")
    }

    @Test("each log level by name", arguments: [("debug", LogLevel.debug), ("info", .info), ("warning", .warning)])
    func logLevels(name: String, level: LogLevel) throws {
        #expect(try parse(["--log-level", name]).logLevel == level)
    }

    @Test("--config reads the file; flags override it wherever they stand")
    func configFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write(
            "config.json",
            #"{"listen": "127.0.0.1:6100", "loops": 2, "log_level": "warning", "store": "/var/lib/p.db", "queue_limit": 5}"#
        )
        let plain = try parse(["--config", file])
        #expect(plain.listenPort == 6100)
        #expect(plain.loops == 2)
        #expect(plain.logLevel == .warning)
        #expect(plain.storePath == "/var/lib/p.db")
        #expect(plain.queueLimit == 5)
        // A flag before --config still wins: flags are applied after the file is read.
        let overridden = try parse(["--loops", "7", "--config", file, "--store", "other.db"])
        #expect(overridden.loops == 7)
        #expect(overridden.storePath == "other.db")
        #expect(overridden.listenPort == 6100, "what no flag sets comes from the file")
        #expect(overridden.queueLimit == 5)
    }

    @Test("a bad config file is an error naming what is wrong")
    func badConfigFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let unknownKey = try directory.write("typo.json", #"{"lisen": "127.0.0.1:1"}"#)
        #expect(usageError { try ServeCommand.parse(["--config", unknownKey]) }?.contains("lisen") == true)
        let missing = directory.path + "/missing.json"
        #expect(usageError { try ServeCommand.parse(["--config", missing]) }?.contains(missing) == true)
    }

    @Test(
        "usage errors name the flag",
        arguments: [
            (["--loops", "0"], "--loops: must be an integer between 1 and 256"),
            (["--loops", "many"], "--loops: must be an integer between 1 and 256"),
            (["--max-message-bytes", "1023"], "--max-message-bytes: must be an integer between 1024 and 67108864"),
            (["--store", ""], "--store: must not be empty"),
            (["--log-level", "verbose"], "--log-level: must be debug, info, warning or error"),
            (["--listen"], "--listen: needs a value"),
            (["--config"], "--config: needs a value"),
            (["--verbose"], #"unknown flag "--verbose" (see pushgate serve --help)"#),
            (["serve"], #"unknown flag "serve" (see pushgate serve --help)"#),
        ])
    func errors(arguments: [String], message: String) {
        #expect(usageError { try ServeCommand.parse(arguments) } == message)
    }

    @Test("a bad listen address is refused as the config key it sets would be")
    func badListen() {
        #expect(
            usageError { try ServeCommand.parse(["--listen", "localhost"]) }
                == #"listen: expected host:port (e.g. 127.0.0.1:50051), got "localhost""#)
        #expect(
            usageError { try ServeCommand.parse(["--metrics-listen", ":9464"]) }
                == #"metrics_listen: expected host:port (e.g. 127.0.0.1:9464), got ":9464""#)
    }
}
