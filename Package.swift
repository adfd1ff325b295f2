// swift-tools-version:6.0
// Pushgate: a push-notification gateway. Dependencies point one way, from the executable down:
//   pushgate → PushGateway → PushGRPC, PushStore, PushMetrics, PushProto and the dialects (PushAPNs,
//   PushFCM, PushADM) → PushDelivery → PushCredentials → PushTransport → PushHTTP2, PushHTTP1, PushTLS
//   → PushPosix → PushSync (the lock). PushCore (pure logic) is used by most; the mocks sit beside the
//   dialects (demo mode's mock APNs is wired by the executable, so PushGateway depends on no mock).
//   `make check-deps` (in `make test`) keeps every target's list below equal to what its files import.
// Only Debian's C libraries are used, wrapped as system-library targets; no outside Swift packages.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    // Release builds drop the run-time exclusivity checks (swift_beginAccess on every access to a
    // class's stored property): on the delivery path they were ~6% of the gateway's and ~10% of
    // the mock's instructions per request (callgrind; scripts/bench/analysis.md). The compile-time
    // checks stay, and debug builds (the test suites) keep the run-time ones.
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)),
]

let package = Package(
    name: "pushgate",
    products: [
        .executable(name: "pushgate", targets: ["pushgate"]),
        // For the fuzz targets in Fuzz/ (a separate package that depends on this one by path).
        .library(name: "PushCore", targets: ["PushCore"]),
        .library(name: "PushProto", targets: ["PushProto"]),
        .library(name: "PushHTTP1", targets: ["PushHTTP1"]),
    ],
    dependencies: [],
    targets: [
        // MARK: C libraries from Debian
        .systemLibrary(
            name: "CNGHTTP2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // PostgreSQL's client library: the store engine for several instances sharing one database.
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // HTTP/1.1 message parsing (libhttp-parser: sans-IO, callbacks; see the README for why).
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        // Linux headers the Glibc module leaves out (epoll, eventfd, signalfd, accept4).
        .systemLibrary(name: "CLinux"),
        .systemLibrary(
            name: "CProtobufC", pkgConfig: "libprotobuf-c", providers: [.apt(["libprotobuf-c-dev"])]),
        // protoc-c output for everything in proto/ (scripts/gen-proto.sh; do not edit).
        .target(
            name: "CPushgateProto",
            dependencies: ["CProtobufC"],
            cSettings: [.unsafeFlags(["-Wno-unused-parameter"])]),

        // MARK: Pushgate
        // Domain types and pure logic: no C, no I/O.
        .target(name: "PushCore", swiftSettings: swiftSettings),
        .testTarget(name: "PushCoreTests", dependencies: ["PushCore"], swiftSettings: swiftSettings),
        // The store behind a narrow protocol: SQLite (WAL, embedded) or PostgreSQL (shared by instances);
        // registry, messages, leased fan-out chunks.
        .target(
            name: "PushStore", dependencies: ["CSQLite", "CLibPQ", "PushSync"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushStoreTests", dependencies: ["PushStore", "PushSync", "PushPosix"], swiftSettings: swiftSettings),

        // Synchronization primitives every layer may use (`Locked`), so that using a lock does not
        // mean depending on the event loops.
        .target(name: "PushSync", swiftSettings: swiftSettings),
        .testTarget(name: "PushSyncTests", dependencies: ["PushSync"], swiftSettings: swiftSettings),

        // epoll event loops, sockets, timers, cross-thread wake-ups. Knows nothing about push.
        .target(name: "PushPosix", dependencies: ["CLinux", "PushSync"], swiftSettings: swiftSettings),
        .testTarget(name: "PushPosixTests", dependencies: ["PushPosix", "PushSync"], swiftSettings: swiftSettings),

        // Counters, gauges and histograms (atomic handles), Prometheus text format, /metrics and /healthz.
        .target(name: "PushMetrics", dependencies: ["PushPosix", "PushSync"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMetricsTests", dependencies: ["PushMetrics", "PushPosix"], swiftSettings: swiftSettings),

        // Sans-IO HTTP/2 sessions (server and client) over nghttp2.
        .target(name: "PushHTTP2", dependencies: ["CNGHTTP2"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PushHTTP2Tests", dependencies: ["PushHTTP2", "CNGHTTP2"], swiftSettings: swiftSettings),

        // Sans-IO HTTP/1.1 messages (client responses, server requests) over libhttp-parser.
        .target(name: "PushHTTP1", dependencies: ["CHTTPParser"], swiftSettings: swiftSettings),
        .testTarget(name: "PushHTTP1Tests", dependencies: ["PushHTTP1"], swiftSettings: swiftSettings),

        // TLS over OpenSSL memory BIOs (sans-IO), certificates, keys, ES256/RS256 signatures.
        .target(name: "PushTLS", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        .testTarget(name: "PushTLSTests", dependencies: ["PushTLS"], swiftSettings: swiftSettings),

        // Provider credentials: APNs provider tokens (ES256 JWTs) and their cache, Google
        // service-account assertions, Amazon client credentials, OAuth2 access-token caches and the
        // token-endpoint exchange. PushTLS keeps TLS and the key primitives these are made with.
        .target(
            name: "PushCredentials", dependencies: ["PushCore", "PushSync", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushCredentialsTests", dependencies: ["PushCredentials", "PushSync", "PushTLS", "PushPosix"],
            swiftSettings: swiftSettings),

        // Swift values over the protoc-c messages; C structs never leave this module.
        .target(
            name: "PushProto", dependencies: ["CPushgateProto", "CProtobufC"], swiftSettings: swiftSettings),
        .testTarget(name: "PushProtoTests", dependencies: ["PushProto"], swiftSettings: swiftSettings),

        // HTTP/2 or HTTP/1.1 (chosen by ALPN) over TLS or cleartext on a PushPosix connection: the
        // glue every HTTP peer uses.
        .target(
            name: "PushTransport", dependencies: ["PushPosix", "PushHTTP2", "PushHTTP1", "PushTLS"],
            swiftSettings: swiftSettings),
        // What the mock servers share: TLS identity, connection registry, generator, clocks.
        // What the request/response mocks (mock-fcm, mock-adm) share: the HTTP/2 connection and
        // listener, requests and answers, access tokens, fault schedules, statistics.
        .target(
            name: "PushMockSupport", dependencies: ["PushCredentials", "PushSync", "PushCore", "PushPosix", "PushHTTP2", "PushHTTP1", "PushTLS", "PushTransport"],
            swiftSettings: swiftSettings),
        // `pushgate mock-apns`: an APNs look-alike over real TLS + HTTP/2, for tests and load-testers.
        .target(
            name: "PushMockAPNs",
            dependencies: ["PushCredentials", "PushSync", "PushCore", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport", "PushMockSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockAPNsTests",
            dependencies: ["PushCredentials", "PushSync", "PushMockAPNs", "PushCore", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport"],
            swiftSettings: swiftSettings),

        // Test support for the mocks' tests: a blocking HTTP/2-over-TLS client on PushTransport.
        // Never imported by product targets.
        .target(
            name: "PushMockTesting", dependencies: ["PushCore", "PushSync", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport"],
            swiftSettings: swiftSettings),

        // `pushgate mock-fcm`: an FCM HTTP v1 + OAuth2 token endpoint look-alike over real TLS + HTTP/2.
        .target(
            name: "PushMockFCM",
            dependencies: ["PushCredentials", "PushCore", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport", "PushMockSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockFCMTests",
            dependencies: ["PushCredentials", "PushMockFCM", "PushMockTesting", "PushCore", "PushPosix", "PushTLS"],
            swiftSettings: swiftSettings),

        // `pushgate mock-adm`: an Amazon Device Messaging + Login-with-Amazon token endpoint look-alike
        // over real TLS + HTTP/2.
        .target(
            name: "PushMockADM", dependencies: ["PushCredentials", "PushCore", "PushPosix", "PushHTTP2", "PushTLS", "PushMockSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushMockADMTests",
            dependencies: ["PushCredentials", "PushMockADM", "PushMockTesting", "PushCore", "PushPosix", "PushTLS"],
            swiftSettings: swiftSettings),

        // The provider-neutral delivery engine: pools of long-lived HTTP/2 + TLS connections with
        // bounded queues, stream limits, retries, liveness, and per-Send result collection.
        .target(
            name: "PushDelivery",
            dependencies: ["PushCredentials", "PushSync", "PushCore", "PushPosix", "PushHTTP2", "PushHTTP1", "PushTLS", "PushTransport", "PushMetrics"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushDeliveryTests", dependencies: ["PushDelivery", "PushCore", "PushTransport"], swiftSettings: swiftSettings),

        // APNs delivery: the APNs dialect of the engine (request headers, provider tokens, reasons).
        .target(
            name: "PushAPNs",
            dependencies: ["PushCredentials", "PushCore", "PushDelivery", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport", "PushMetrics"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushAPNsTests", dependencies: ["PushCredentials", "PushSync", "PushAPNs", "PushDelivery", "PushCore", "PushTLS", "PushPosix", "PushMockAPNs", "PushTransport"],
            swiftSettings: swiftSettings),

        // FCM delivery: the FCM HTTP v1 dialect of the engine, service-account OAuth2 access tokens.
        .target(
            name: "PushFCM",
            dependencies: ["PushCredentials", "PushCore", "PushDelivery", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport", "PushMetrics"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushFCMTests",
            dependencies: ["PushCredentials", "PushFCM", "PushDelivery", "PushCore", "PushTLS", "PushPosix", "PushMockFCM", "PushTransport"],
            swiftSettings: swiftSettings),

        // ADM delivery: the Amazon Device Messaging dialect of the engine, Login-with-Amazon tokens.
        .target(
            name: "PushADM",
            dependencies: ["PushCredentials", "PushCore", "PushDelivery", "PushPosix", "PushHTTP2", "PushTLS", "PushTransport", "PushMetrics"],
            swiftSettings: swiftSettings),

        .testTarget(
            name: "PushADMTests",
            dependencies: ["PushCredentials", "PushADM", "PushDelivery", "PushCore", "PushTLS", "PushPosix", "PushMockADM", "PushTransport"],
            swiftSettings: swiftSettings),

        // A gRPC server on PushHTTP2 + PushPosix: routing, framing, deadlines, statuses.
        .target(
            name: "PushGRPC", dependencies: ["PushCore", "PushSync", "PushPosix", "PushHTTP2", "PushTransport", "PushTLS"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushGRPCTests", dependencies: ["PushGRPC", "PushHTTP2", "PushMockTesting", "PushPosix", "PushSync"],
            swiftSettings: swiftSettings),

        // The Push, Registry and Health services, configuration, validation.
        .target(
            name: "PushGateway",
            dependencies: ["PushCredentials", "PushSync", "PushCore", "PushGRPC", "PushProto", "PushPosix", "PushDelivery", "PushAPNs", "PushFCM", "PushADM", "PushTLS", "PushStore", "PushMetrics", "PushTransport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "PushGatewayTests", dependencies: ["PushGateway", "PushSync", "PushProto", "PushCore", "PushTransport", "PushGRPC", "PushPosix"],
            swiftSettings: swiftSettings),

        // The command line: serve, send, mock-apns, mock-fcm, mock-adm, version.
        .executableTarget(
            name: "pushgate",
            dependencies: [
                "PushCredentials", "PushGateway", "PushGRPC", "PushProto", "PushCore", "PushMockAPNs", "PushMockFCM", "PushSync",
                "PushMockADM", "PushMockSupport", "PushStore", "PushTLS", "PushPosix", "PushHTTP2", "PushMetrics",
                "PushTransport",
            ],
            swiftSettings: swiftSettings),
    ]
)
