// swift-tools-version:6.0
// Pushgate: a push-notification gateway. Dependencies point one way, from the executable down. The
// comment above each target says what it is; docs/architecture.md's module map is made from those comments and
// the dependency lists (scripts/check-deps.py --write), and `make check-deps` (in `make test`) keeps
// every list equal to what the target's files import and the map equal to this file.
// Only Debian's C libraries are used, wrapped as system-library targets; no outside Swift packages.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // An import is internal unless marked `public import` (a module's public API says which
    // modules it exposes), and a file uses only members of modules it imports itself (no
    // reaching through another file's imports). scripts/check-deps.py checks every target has both.
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // Release builds drop the run-time exclusivity checks (swift_beginAccess on every access to a
    // class's stored property): on the delivery path they were ~6% of the gateway's and ~10% of
    // the mock's instructions per request (callgrind; scripts/bench/analysis.md). The compile-time
    // checks stay, and debug builds (the test suites) keep the run-time ones.
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
    // Release builds optimize across modules: generic and small functions of one module are
    // specialized and inlined into the next (the delivery path crosses PushPosix, PushHTTP2,
    // PushGRPC, PushDelivery, PushAPNs and PushGateway). −577 instructions per 1-token Send
    // (callgrind, 62,688 → 62,111; scripts/bench/analysis.md, tenth pass); ~100 s from clean.
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "pushgate",
    products: [
        .executable(name: "pushgate", targets: ["pushgate"]),
        // For the fuzz targets in Fuzz/ (a separate package that depends on this one by path).
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "PushProto", targets: ["PushProto"]),
        .library(name: "PushHTTP1", targets: ["PushHTTP1"]),
        .library(name: "PushGzip", targets: ["PushGzip"]),
        .library(name: "PushGRPC", targets: ["PushGRPC"]),
        .library(name: "PushAWSQuery", targets: ["PushAWSQuery"]),
        .library(name: "PushTLS", targets: ["PushTLS"]),
    ],
    dependencies: [],
    targets: [
        // MARK: C libraries from Debian
        // HTTP/2 framing, HPACK and flow control (nghttp2 1.52, driven sans-IO).
        .systemLibrary(
            name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        // TLS, X.509 and the EC/RSA keys of provider credentials (OpenSSL 3).
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // The embedded store engine of a single instance.
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // PostgreSQL's client library: the store engine for several instances sharing one database.
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // HTTP/1.1 message parsing (libhttp-parser: sans-IO, callbacks; docs/development.md says why).
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        // gzip for gRPC messages (zlib: deflate and inflate; docs/development.md says why).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The process's memory allocator (mimalloc): many small short-lived objects per request on
        // several loop threads; docs/development.md says why.
        .systemLibrary(name: "CMimalloc", providers: [.apt(["libmimalloc-dev"])]),
        // CSV (libcsv: RFC 4180, strict, fed bytes, callbacks) for `pushgate import`/`export`;
        // docs/development.md says why.
        .systemLibrary(name: "CLibCSV", providers: [.apt(["libcsv-dev"])]),
        // Linux headers the Glibc module leaves out (epoll, eventfd, signalfd, getrandom, accept4).
        .systemLibrary(name: "CLinux"),
        // Protocol Buffers in C (libprotobuf-c): packing and unpacking the API's messages.
        .systemLibrary(
            name: "CProtobufC", pkgConfig: "libprotobuf-c", providers: [.apt(["libprotobuf-c-dev"])]),
        // protoc-c output for everything in proto/ (scripts/gen-proto.sh; do not edit).
        .target(
            name: "CPushgateProto",
            dependencies: ["CProtobufC"],
            cSettings: [.unsafeFlags(["-Wno-unused-parameter"])]),

        // MARK: Pushgate
        // Domain types and pure logic, no C, no I/O: gRPC framing, JSON, APNs payloads, FCM, ADM and
        // Web Push messages, reasons, validation, SNS message structure, attributes, push-type
        // inference, filter policies.
        .target(name: "PushCore", swiftSettings: swiftSettings),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore"], swiftSettings: swiftSettings),
        // The Store protocol with one set of queries on SQLite (WAL, one writer queue) or PostgreSQL
        // (libpq, a pool of connections on their own threads); versioned migrations; registry,
        // messages, leased fan-out chunks.
        .target(
            name: "PushStore", dependencies: ["CSQLite", "CLibPQ", "CLinux", "PushSync", "PushTLS"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushStoreTests", dependencies: ["PushStore", "CSQLite", "PushSync", "PushPosix", "PushTestSupport"],
            swiftSettings: swiftSettings),

        // RFC 4180 CSV records over libcsv, fed a line at a time (each record knows its line), bounded
        // per record; no I/O.
        .target(name: "PushCSV", dependencies: ["CLibCSV"], swiftSettings: swiftSettings),
        .testTarget(name: "PushCSVTests", dependencies: ["PushCSV"], swiftSettings: swiftSettings),

        // Synchronization primitives every layer may use (`Locked`, a pthread mutex TSan can see),
        // so that using a lock does not mean depending on the event loops.
        .target(name: "PushSync", swiftSettings: swiftSettings),
        .testTarget(name: "PushSyncTests", dependencies: ["PushSync"], swiftSettings: swiftSettings),

        // epoll event loops, sockets, timers, cross-thread wake-ups, host names resolved off the loops
        // (and which addresses are global). Knows nothing about push.
        .target(
            name: "PushPosix", dependencies: ["CLinux", "CMimalloc", "PushSync"], swiftSettings: swiftSettings,
            // Named on the link line as well as by CMimalloc's module map: a link-time-optimized
            // release build (Makefile) takes a module map's libraries after libc, and glibc's malloc
            // then wins over mimalloc's in every process.
            linkerSettings: [.linkedLibrary("mimalloc")]),
        .testTarget(name: "PushPosixTests", dependencies: ["PushPosix", "PushSync"], swiftSettings: swiftSettings),

        // Counters, gauges and histograms (atomic handles), Prometheus text format, /metrics and /healthz
        // (over PushHTTP1's server session).
        .target(
            name: "PushMetrics", dependencies: ["PushHTTP1", "PushPosix", "PushSync"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMetricsTests", dependencies: ["PushMetrics", "PushPosix"], swiftSettings: swiftSettings),

        // Sans-IO HTTP/2 sessions (server and client) over nghttp2.
        .target(name: "PushHTTP2", dependencies: ["CNGHTTP2"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushHTTP2Tests", dependencies: ["PushHTTP2", "CNGHTTP2"], swiftSettings: swiftSettings),

        // Sans-IO HTTP/1.1 messages (client responses, server requests) over libhttp-parser.
        .target(name: "PushHTTP1", dependencies: ["CHTTPParser"], swiftSettings: swiftSettings),
        .testTarget(name: "PushHTTP1Tests", dependencies: ["PushHTTP1"], swiftSettings: swiftSettings),

        // TLS over OpenSSL memory BIOs (sans-IO), certificates, keys, ES256/RS256 signatures, digests;
        // P-256 ECDH, HKDF-SHA-256 and AES-128-GCM.
        .target(name: "PushTLS", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushTLSTests", dependencies: ["PushTLS", "PushTestSupport"], swiftSettings: swiftSettings),

        // Web Push message encryption (RFC 8291): the one-record `aes128gcm` content coding (RFC 8188)
        // written by the sender and read back by the mock push service, on PushTLS's primitives.
        .target(name: "PushWebPushCrypto", dependencies: ["PushTLS"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushWebPushCryptoTests", dependencies: ["PushWebPushCrypto", "PushTLS"],
            swiftSettings: swiftSettings),

        // The AWS Query protocol as SNS speaks it, no I/O: form-encoded request bodies decoded within
        // limits into parameters (lists and maps in the Query conventions), AWS Signature Version 4
        // verified, XML answers written.
        .target(name: "PushAWSQuery", dependencies: ["PushCore", "PushTLS"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushAWSQueryTests", dependencies: ["PushAWSQuery", "PushTLS"], swiftSettings: swiftSettings),

        // Provider credentials: APNs provider tokens (ES256 JWTs) and their cache, VAPID tokens and
        // their cache per push service, Google service-account assertions, Amazon client
        // credentials, OAuth2 access-token caches and the token-endpoint exchange. PushTLS keeps TLS
        // and the key primitives these are made with.
        .target(
            name: "PushCredentials",
            dependencies: ["PushCore", "PushSync", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushCredentialsTests", dependencies: ["PushCredentials", "PushSync", "PushTLS", "PushPosix"],
            swiftSettings: swiftSettings),

        // Swift values over the protoc-c messages (C structs never leave this module), their proto3
        // JSON mapping on PushCore's JSON parser and writer, and the notification's domain form; the
        // compiled descriptors of proto/ that server reflection serves.
        .target(
            name: "PushProto", dependencies: ["CPushgateProto", "CProtobufC", "PushCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushProtoTests", dependencies: ["PushProto", "PushCore"],
            // The proto3 JSON corpus that scripts/gen-proto-json-corpus.py writes; read by path.
            exclude: ["Resources"], swiftSettings: swiftSettings),

        // HTTP/2 or HTTP/1.1 (chosen by ALPN) over TLS or cleartext on a PushPosix connection: the
        // glue every HTTP peer uses.
        .target(
            name: "PushTransport", dependencies: ["PushPosix", "PushHTTP2", "PushHTTP1", "PushTLS"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushTransportTests",
            dependencies: [
                "PushTransport", "PushPosix", "PushHTTP2", "PushHTTP1", "PushTLS", "PushSync", "PushTestSupport",
            ],
            swiftSettings: swiftSettings),
        // What the mocks share: TLS identity, the HTTP/2 and HTTP/1.1 connections and listener,
        // requests and answers, access tokens, fault schedules, statistics.
        .target(
            name: "PushMockSupport",
            dependencies: [
                "PushCredentials", "PushSync", "PushCore", "PushPosix", "PushHTTP2", "PushHTTP1", "PushTLS",
                "PushTransport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockSupportTests",
            dependencies: [
                "PushMockSupport", "PushMockTesting", "PushCore", "PushSync", "PushPosix", "PushHTTP2", "PushHTTP1",
                "PushTLS", "PushTransport",
            ],
            swiftSettings: swiftSettings),
        // `pushgate mock-apns`: an APNs look-alike over real TLS + HTTP/2, for tests and load-testers.
        .target(
            name: "PushMockAPNs",
            dependencies: [
                "PushCredentials", "PushSync", "PushCore", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport",
                "PushMockSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockAPNsTests",
            dependencies: [
                "PushCredentials", "PushSync", "PushMockAPNs", "PushCore", "PushPosix", "PushHTTP2", "PushTLS",
                "PushTransport",
            ],
            swiftSettings: swiftSettings),

        // Test support: a blocking HTTP/2 client (TLS or h2c) on PushTransport, for the tests of the
        // mocks and of the gRPC server. Never imported by product targets.
        .target(
            name: "PushMockTesting",
            dependencies: ["PushCore", "PushSync", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport"],
            swiftSettings: swiftSettings),

        // `pushgate mock-fcm`: an FCM HTTP v1 + OAuth2 token endpoint look-alike over real TLS and
        // HTTP/2 (or HTTP/1.1).
        .target(
            name: "PushMockFCM",
            dependencies: [
                "PushCredentials", "PushCore", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport", "PushMockSupport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockFCMTests",
            dependencies: [
                "PushCredentials", "PushMockFCM", "PushMockTesting", "PushCore", "PushPosix", "PushTLS",
                "PushMockSupport",
            ],
            swiftSettings: swiftSettings),

        // `pushgate mock-adm`: an Amazon Device Messaging + Login-with-Amazon token endpoint look-alike
        // over real TLS and HTTP/1.1 (as Amazon speaks it) or HTTP/2.
        .target(
            name: "PushMockADM",
            dependencies: ["PushCredentials", "PushCore", "PushPosix", "PushHTTP2", "PushTLS", "PushMockSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockADMTests",
            dependencies: [
                "PushCredentials", "PushMockADM", "PushMockTesting", "PushCore", "PushPosix", "PushTLS",
                "PushMockSupport",
            ],
            swiftSettings: swiftSettings),

        // `pushgate mock-hms`: a Huawei Push Kit look-alike (v3 with service-account PS256 JWTs, v1 with
        // the OAuth2 client-credentials token endpoint) over real TLS and HTTP/1.1 (or HTTP/2).
        .target(
            name: "PushMockHMS",
            dependencies: [
                "PushCore", "PushCredentials", "PushHTTP2", "PushMockSupport", "PushPosix", "PushSync", "PushTLS",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockHMSTests",
            dependencies: [
                "PushCore", "PushCredentials", "PushMockHMS", "PushMockSupport", "PushMockTesting", "PushPosix",
                "PushTLS",
            ],
            swiftSettings: swiftSettings),

        // `pushgate mock-webpush`: a Web Push service look-alike (RFC 8030/8291/8292) over real TLS
        // with HTTP/2 and HTTP/1.1 by ALPN; subscriptions derived from a seed, pushes decrypted.
        .target(
            name: "PushMockWebPush",
            dependencies: [
                "PushCredentials", "PushCore", "PushHTTP2", "PushMockSupport", "PushPosix", "PushSync", "PushTLS",
                "PushWebPushCrypto",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockWebPushTests",
            dependencies: [
                "PushCore", "PushHTTP2", "PushMockSupport", "PushMockTesting", "PushMockWebPush", "PushPosix",
                "PushTLS", "PushTransport", "PushWebPushCrypto",
            ],
            swiftSettings: swiftSettings),

        // The provider-neutral delivery engine: a pool per origin of long-lived connections; per
        // connection a pure state machine (queue, stream limits, retries, reconnects, liveness) and
        // a thin driver for HTTP/2 and HTTP/1.1; dialects write through ProviderWire; results.
        .target(
            name: "PushDelivery",
            dependencies: [
                "PushCredentials", "PushSync", "PushCore", "PushPosix", "PushHTTP2", "PushHTTP1", "PushTLS",
                "PushTransport", "PushMetrics",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushDeliveryTests",
            dependencies: ["PushDelivery", "PushCore", "PushPosix", "PushTestSupport", "PushTLS", "PushTransport"],
            swiftSettings: swiftSettings),

        // Test support, for test targets only (it lives in Tests/, and check-deps refuses it as a
        // dependency of anything in Sources/): a fake provider dialect and its loopback server, a
        // listener that never answers, temporary directories, waiting for a condition.
        .target(
            name: "PushTestSupport",
            dependencies: [
                "PushCore", "PushCredentials", "PushDelivery", "PushHTTP2", "PushMockSupport", "PushPosix", "PushSync",
                "PushTLS", "PushTransport",
            ],
            path: "Tests/PushTestSupport", swiftSettings: swiftSettings),

        // APNs delivery: the APNs dialect of the engine (request headers, provider tokens, reasons).
        .target(
            name: "PushAPNs",
            dependencies: [
                "PushCredentials", "PushCore", "PushDelivery", "PushHTTP2", "PushSync", "PushTransport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushAPNsTests",
            dependencies: [
                "PushCredentials", "PushSync", "PushAPNs", "PushDelivery", "PushCore", "PushTLS", "PushPosix",
                "PushMockAPNs", "PushTransport", "PushHTTP2", "PushTestSupport",
            ],
            swiftSettings: swiftSettings),

        // FCM delivery: the FCM HTTP v1 dialect of the engine (message halves, error mapping).
        .target(
            name: "PushFCM",
            dependencies: [
                "PushCredentials", "PushCore", "PushDelivery", "PushHTTP2", "PushTransport",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushFCMTests",
            dependencies: [
                "PushCredentials", "PushFCM", "PushDelivery", "PushCore", "PushTLS", "PushPosix", "PushMockFCM",
                "PushTransport", "PushMockSupport", "PushSync",
            ],
            swiftSettings: swiftSettings),

        // Huawei Push Kit delivery: the v3 (HarmonyOS NEXT) and v2 (HMS Core) dialects of the engine.
        .target(
            name: "PushHMS",
            dependencies: [
                "PushCredentials", "PushCore", "PushDelivery", "PushHTTP2", "PushTransport",
            ],
            swiftSettings: swiftSettings),

        // ADM delivery: the Amazon Device Messaging dialect of the engine (canonical ids, reasons).
        .target(
            name: "PushADM",
            dependencies: [
                "PushCredentials", "PushCore", "PushDelivery", "PushHTTP2", "PushTransport",
            ],
            swiftSettings: swiftSettings),

        .testTarget(
            name: "PushADMTests",
            dependencies: [
                "PushCredentials", "PushADM", "PushDelivery", "PushCore", "PushTLS", "PushPosix", "PushMockADM",
                "PushTransport", "PushMockSupport",
            ],
            swiftSettings: swiftSettings),

        // Web Push for the engine: subscriptions checked against the allowed push services,
        // messages encrypted per subscriber (RFC 8291), VAPID tokens per origin (RFC 8292).
        // Webhooks: the engine's dialect for POSTing signed event batches to a receiver.
        .target(
            name: "PushWebhook",
            dependencies: ["PushCore", "PushCredentials", "PushDelivery", "PushHTTP2", "PushTLS"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushWebhookTests", dependencies: ["PushWebhook", "PushCore", "PushDelivery"],
            swiftSettings: swiftSettings),

        .target(
            name: "PushWebPush",
            dependencies: [
                "PushCore", "PushCredentials", "PushDelivery", "PushHTTP2", "PushSync", "PushTLS", "PushTransport",
                "PushWebPushCrypto",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushWebPushTests",
            dependencies: [
                "PushWebPush", "PushCore", "PushCredentials", "PushDelivery", "PushMetrics", "PushMockSupport",
                "PushMockWebPush", "PushPosix", "PushTLS", "PushTransport",
            ],
            swiftSettings: swiftSettings),

        // gzip over zlib: whole messages compressed, and inflated within a bound (a bomb costs at
        // most the limit).
        .target(name: "PushGzip", dependencies: ["CZlib"], swiftSettings: swiftSettings),
        .testTarget(name: "PushGzipTests", dependencies: ["PushGzip"], swiftSettings: swiftSettings),

        // A gRPC server (admission at HEADERS, request budgets, the client watch, routing, framing,
        // deadlines, statuses), the same methods over the Connect protocol (HTTP/1.1 and HTTP/2, JSON
        // and binary) and plain HTTP routes on its port, and a small client.
        .target(
            name: "PushGRPC",
            dependencies: [
                "PushCore", "PushSync", "PushPosix", "PushHTTP1", "PushHTTP2", "PushTransport", "PushTLS", "PushGzip",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushGRPCTests",
            dependencies: [
                "PushGRPC", "PushCore", "PushGzip", "PushHTTP2", "PushMockTesting", "PushPosix", "PushSync",
            ],
            swiftSettings: swiftSettings),

        // The gateway: configuration, authorization, the Push, Registry, Channels, Health and server
        // reflection services, gorush's /api/push, the SNS API, the operator's console (its embedded
        // files), delivery of Sends, the fan-out of Publish, webhooks, logs and metrics.
        .target(
            name: "PushGateway",
            dependencies: [
                "PushCredentials", "PushSync", "PushCore", "PushGRPC", "PushProto", "PushPosix", "PushDelivery",
                "PushAPNs", "PushFCM", "PushADM", "PushHMS", "PushWebPush", "PushTLS", "PushStore", "PushMetrics",
                "PushTransport",
                "PushAWSQuery", "PushWebhook", "PushCSV",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushGatewayTests",
            dependencies: [
                "PushGateway", "PushWebPush", "PushProto", "PushCore", "PushTransport", "PushGRPC", "PushAWSQuery",
                "PushMetrics", "PushPosix", "PushTLS", "PushDelivery", "PushStore", "PushSync", "PushTestSupport",
                "PushCSV",
            ],
            swiftSettings: swiftSettings),

        // What every command reads and writes: FlagReader, usage errors that name the flag, standard
        // error. Shared by the executable and PushBench.
        .target(name: "PushCommandLine", swiftSettings: swiftSettings),
        .testTarget(name: "PushCommandLineTests", dependencies: ["PushCommandLine"], swiftSettings: swiftSettings),

        // The load generator behind `pushgate bench`: gRPC client, child processes, statistics, table, JSON.
        .target(
            name: "PushBench",
            dependencies: [
                "PushCommandLine", "PushCore", "PushGRPC", "PushHTTP2", "PushMetrics", "PushPosix", "PushProto",
                "PushStore", "PushSync", "PushTLS", "PushTransport", "PushWebPushCrypto",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushBenchTests", dependencies: ["PushBench", "PushMetrics", "PushPosix", "PushProto"],
            swiftSettings: swiftSettings),

        // The command line: serve, send, bench, load-subscribers, api-key, vapid-key, mock-apns,
        // mock-fcm, mock-adm, mock-hms, mock-webpush, version.
        .executableTarget(
            name: "pushgate",
            dependencies: [
                "PushBench", "PushCommandLine", "PushCredentials", "PushGateway", "PushGRPC", "PushProto", "PushCore",
                "PushMockAPNs", "PushMockFCM", "PushMockADM", "PushMockHMS", "PushMockSupport", "PushMockWebPush",
                "PushStore",
                "PushTLS",
                "PushPosix", "PushSync",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "pushgateTests",
            dependencies: [
                "pushgate", "PushCommandLine", "PushCore", "PushCredentials", "PushGateway", "PushMockADM",
                "PushMockAPNs", "PushMockHMS", "PushMockFCM", "PushMockSupport", "PushMockWebPush", "PushProto",
                "PushTestSupport", "PushTLS",
            ],
            swiftSettings: swiftSettings),
    ]
)
