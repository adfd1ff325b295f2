import PushGateway

enum Version {
    static let current = "0.1.0"
}

enum Usage {
    static let main = """
        pushgate — a push-notification gateway (gRPC in; APNs, FCM, ADM and Web Push out)

        Usage:
          pushgate serve [--config FILE] [flags]   run the gateway
          pushgate send --token HEX [flags]        send a notification through a running gateway
          pushgate mock-apns [flags]               run a mock APNs server (tests, load tests)
          pushgate mock-fcm [flags]                run a mock FCM + OAuth2 token server (tests, load tests)
          pushgate mock-adm [flags]                run a mock ADM + Login-with-Amazon token server (tests, load tests)
          pushgate mock-hms [flags]                run a mock Huawei Push Kit (v3 JWT, v1 OAuth; tests, load tests)
          pushgate mock-webpush [flags]            run a mock Web Push service (autopush-like; tests, load tests)
          pushgate bench [flags]                   load-test a gateway (starts mock-apns and one)
          pushgate api-key [--name N] [--apps A,B]  make an API key and the key_sha256 for the config
          pushgate sns-credential --secret-file F  make an access key pair for the SNS API (AWS SigV4)
          pushgate vapid-key --out FILE            make a Web Push (VAPID) key and print its public key
          pushgate import --config FILE [INPUT]    import endpoints and topics from JSON Lines or CSV
          pushgate export --config FILE [OUTPUT]   export endpoints and topics in the same format
          pushgate load-subscribers [flags]        bulk-load test subscribers into a store (tests, benchmarks)
          pushgate version                         print the version
          pushgate --help                          this text

        Run `pushgate serve --help` for the serve flags. docs/configuration.md documents every config key.
        """

    static let serve = """
        Usage: pushgate serve [--config FILE] [flags]

        Runs the gateway. With no config it listens on 127.0.0.1:50051. Flags override the file.
        With no apps configured it starts in DEMO MODE: app "demo" delivers to a mock APNs that this
        process runs on loopback (nothing reaches Apple).

          --config FILE             JSON config (keys in docs/configuration.md)
          --listen HOST:PORT        gRPC listen address (config: listen)
          --metrics-listen ADDR     serve /metrics and /healthz over HTTP on host:port ADDR
                                    (config: metrics_listen; default off)
          --loops N                 event-loop threads (config: loops; default one per core)
          --max-message-bytes N     largest request message (config: max_message_bytes; default \(GatewayConfiguration().maxMessageBytes))
          --store FILE|URL          the SQLite database file, or a postgres:// URL shared by several
                                    instances (config: store; default ./pushgate.db)
          --log-level LEVEL         debug, info, warning or error (config: log_level)
          --no-demo                 with no apps configured, do not start the demo app and mock APNs
          --tls-cert-file FILE      serve TLS (ALPN h2, http/1.1) with this PEM chain (config: tls_cert_file)
          --tls-key-file FILE       its private key (config: tls_key_file)
          --client-ca-file FILE     require client certificates from these CAs: mTLS (config: client_ca_file)
          --allow-insecure          allow plaintext h2c on a non-loopback address (config: allow_insecure)
          -h, --help                this text

        Security: plaintext h2c is for loopback; another listen address needs TLS or --allow-insecure.
        With no api_keys in the config only loopback clients are served; with api_keys every Push and
        Registry call needs `authorization: Bearer <key>` (make keys with `pushgate api-key`).

        Stops on SIGINT or SIGTERM; unfinished Publish fan-outs resume at the next start.
        SIGHUP reads the config file and flags again and applies the apps and API keys without
        dropping connections (other keys need a restart; the log says which).
        """
}
