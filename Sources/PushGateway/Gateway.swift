import PushDelivery
import PushGRPC
import PushMetrics
import PushPosix
import PushProto
import PushStore
import PushTLS

/// A running Pushgate: event loops, the store, the apps' provider clients, the fan-out, the gRPC
/// listener and the services behind it.
public final class Gateway: Sendable {
    /// The running configuration (apps and keys as of the last reload).
    public var configuration: GatewayConfiguration { live.configuration }
    public let health: HealthStatusBoard
    let group: EventLoopGroup
    private let server: GRPCServer
    let metrics: GatewayMetrics
    /// `/metrics` and `/healthz` (config `metrics_listen`); nil when off.
    private let metricsServer: MetricsHTTPServer?
    private let delivery: NotificationDelivery
    private let store: any Store
    private let fanOut: FanOut
    private let events: DeliveryEvents
    private let webhooks: Webhooks
    private let deliveryLogPurger: Task<Void, Never>
    private let channelClients: ChannelClients
    let live: LiveSettings
    let authorizer: Authorizer
    /// Demo mode's stand-in app (no apps configured), nil otherwise.
    private let demo: DemoApp?
    /// Hands freed heap back to the system while no call runs (``HeapTrim``).
    private let heapTrimmer: Task<Void, Never>
    /// The demo app, kept by reloads that configure no apps.
    var demoApp: AppConfiguration? { demo?.app }
    let log: Log

    /// Opens the store, starts the loops and listens; resumes unfinished fan-outs. Returns once the
    /// port is bound.
    /// - Parameter demo: what to serve when no apps are configured; nil means no demo mode.
    public static func start(
        configuration: GatewayConfiguration, log: Log, demo: DemoMode? = nil
    ) async throws -> Gateway {
        let demo = configuration.apps.isEmpty && configuration.demoWhenNoApps ? demo : nil
        let appNames = demo.map { [$0.appName] } ?? configuration.apps.map(\.name)
        try configuration.security.check(
            listenHost: configuration.listenHost, listenPort: configuration.listenPort, appNames: appNames)
        let tls = try configuration.security.makeServerTLSContext()
        let store: any Store
        do {
            store = try await StoreSetting.open(configuration.storePath)
        } catch {
            throw ConfigurationError(
                "store \(StoreSetting.redacted(configuration.storePath).debugDescription): \(error)")
        }
        do {
            let gateway = try Gateway(configuration: configuration, tls: tls, store: store, log: log, demo: demo)
            await gateway.fanOut.resumeUnfinished()
            return gateway
        } catch {
            await store.close()
            throw error
        }
    }

    private init(
        configuration: GatewayConfiguration, tls: TLSContext?, store: any Store, log: Log, demo demoMode: DemoMode?
    ) throws {
        var configuration = configuration
        self.log = log
        self.store = store
        health = HealthStatusBoard()
        let group = try EventLoopGroup(loopCount: configuration.loops, namePrefix: "pushgate-loop")
        self.group = group
        // This process's leases (fan-out chunks, webhooks); a new id every start.
        let owner = "pushgate-" + RandomUUID.make()
        let clients: [String: any DeliveryClient]
        do {
            if let demoMode {
                let demo = try demoMode.start(group)
                configuration.apps = [demo.app]
                self.demo = demo
                log.warning(
                    "DEMO MODE: no apps are configured, so app \"\(demo.app.name)\" delivers to a \(demo.standIn) started by "
                        + "this process; nothing reaches Apple. Configure apps to send for real.",
                    ["mock": demo.address, "app": demo.app.name, "bundle_id": demo.app.bundleID])
            } else {
                demo = nil
            }
            metrics = GatewayMetrics(apps: configuration.apps)
            clients = try DeliveryClientFactory.makeClients(configuration, group: group, log: log, metrics: metrics)
            webhooks = try Webhooks(
                configuration.webhooks, store: store, owner: owner, group: group, log: log, metrics: metrics)
        } catch {
            group.shutdown()
            throw error
        }
        let live = LiveSettings(configuration: configuration, clients: clients, metrics: metrics)
        self.live = live
        let events = DeliveryEvents(
            log: log, logTokens: configuration.logTokens, webhooks: webhooks.router, outbox: webhooks.writer)
        self.events = events
        delivery = NotificationDelivery(live: live, queueLimit: configuration.queueLimit, events: events)
        // A page must fit in an app's queue, or its room could never be reserved.
        let fanOut = FanOut(
            store: store, live: live, events: events, log: log, metrics: metrics,
            pageSize: min(FanOut.defaultPageSize, configuration.queueLimit), settings: configuration.fanOut,
            deliveryLog: configuration.deliveryLog, owner: owner)
        metrics.registerGauges(clients: { live.clients }, fanOut: fanOut)
        self.fanOut = fanOut
        let publish = PublishService(live: live, store: store, fanOut: fanOut)
        // Health stays open; Push, Registry and reflection resolve a Caller per call (APIKeys.swift).
        let authorizer = Authorizer(keys: configuration.security.apiKeys)
        self.authorizer = authorizer
        let channelClients = ChannelClients(live: live, group: group, log: log, metrics: metrics)
        self.channelClients = channelClients
        var services = [
            HealthService.make(board: health),
            PushService.make(
                live: live, delivery: delivery, publish: publish, events: events, authorizer: authorizer,
                metrics: metrics, stats: GatewayStats(live: live, metrics: metrics, fanOut: fanOut)),
            RegistryService(live: live, store: store, authorizer: authorizer).make(),
            ChannelsService(live: live, store: store, authorizer: authorizer, channelClients: channelClients).make(),
        ]
        if configuration.reflection {
            services += ReflectionService.make(served: services.map(\.name), authorizer: authorizer)
        }
        var grpc = GRPCServerConfiguration()
        grpc.host = configuration.listenHost
        grpc.port = configuration.listenPort
        grpc.maxMessageSize = configuration.maxMessageBytes
        grpc.maxConcurrentStreams = UInt32(configuration.maxConcurrentStreams)
        grpc.tls = tls
        // Every socket is a descriptor: with RLIMIT_NOFILE below max_connections, clients would take
        // the descriptors provider connections need (EMFILE). Raised to the hard limit, then checked.
        grpc.maxConnections = configuration.maxConnections
        if let limit = DescriptorLimit.raiseToHard() {
            let allowed = configuration.clientConnectionsAllowed(descriptorLimit: limit)
            if allowed < configuration.maxConnections {
                log.warning(
                    "max_connections lowered: the open-file limit (RLIMIT_NOFILE) leaves room for fewer client connections",
                    [
                        "max_connections": "\(configuration.maxConnections)", "serving_at_most": "\(allowed)",
                        "rlimit_nofile": "\(limit)",
                        "hint": "raise the limit (ulimit -n, LimitNOFILE=) or lower max_connections",
                    ])
                grpc.maxConnections = allowed
            }
        }
        grpc.idleTimeout = configuration.idleTimeoutSeconds > 0 ? .seconds(configuration.idleTimeoutSeconds) : nil
        grpc.requestTimeout =
            configuration.requestTimeoutSeconds > 0 ? .seconds(configuration.requestTimeoutSeconds) : nil
        grpc.maxBufferedRequestBytesPerConnection = configuration.maxBufferedRequestBytesPerConnection
        grpc.maxBufferedRequestBytes = configuration.maxBufferedRequestBytes
        grpc.maxUnsentResponseBytes = configuration.maxUnsentResponseBytes
        grpc.writeTimeout = configuration.writeTimeoutSeconds > 0 ? .seconds(configuration.writeTimeoutSeconds) : nil
        grpc.callObserver = GRPCCallObservers([metrics.rpc, AccessLog(log: log)])
        // Read at each request: a reload that adds api_keys lifts it.
        grpc.allowsHost = { host in !live.configuration.security.apiKeys.isEmpty || HostGuard.allows(host) }
        do {
            server = try GRPCServer(
                configuration: grpc, services: services,
                routes: [
                    GorushEndpoint.route(live: live, delivery: delivery, authorizer: authorizer, metrics: metrics),
                    SNSDoor(live: live, store: store, publish: publish, metrics: metrics).route(),
                ] + (configuration.console ? ConsoleRoutes.routes() : []), group: group)
        } catch {
            group.shutdown()
            throw error
        }
        do {
            let registry = metrics.registry
            metricsServer = try configuration.metricsListen.map { host, port in
                try MetricsHTTPServer(host: host, port: port, group: group, registry: registry)
            }
        } catch {
            server.close()
            group.shutdown()
            throw ConfigurationError("metrics_listen: \(error)")
        }
        for service in Self.services {
            health.set(service, .serving)
        }
        Self.watch(store.health, board: health, log: log)
        heapTrimmer = Self.startHeapTrimmer(server: server, group: group, log: log)
        webhooks.start()
        let purger = DeliveryLogPurger(
            store: store, retentionHours: configuration.deliveryLog.retentionHours, metrics: metrics, log: log)
        deliveryLogPurger = Task { await purger.run() }
        log.info(
            "listening",
            [
                "address": "\(configuration.listenHost):\(server.localPort)", "loops": "\(configuration.loops)",
                "apps": configuration.apps.map(\.name).joined(separator: ","),
                "store": StoreSetting.redacted(configuration.storePath),
                "instance": fanOut.policy.owner,
                "tls": configuration.security.tlsMode, "api_keys": "\(configuration.security.apiKeys.keys.count)",
                "sns_credentials": "\(configuration.sns.credentials.count)",
            ])
        if configuration.security.apiKeys.isEmpty && !SecurityConfiguration.isLoopbackHost(configuration.listenHost) {
            log.warning(
                "no api_keys configured: only loopback clients are served; add api_keys to serve other hosts",
                ["address": "\(configuration.listenHost):\(server.localPort)"])
        }
        if let metricsServer, let (host, _) = configuration.metricsListen {
            log.info(
                "metrics listening", ["address": "\(host):\(metricsServer.localPort)", "paths": "/metrics,/healthz"])
        }
    }

    static let services = ["", "pushgate.v1.Push", "pushgate.v1.Registry", "pushgate.v1.Channels", storeHealthService]

    /// The health-check name that follows the store alone (SERVING while its calls succeed).
    static let storeHealthService = "pushgate.store"
    /// The services that report NOT_SERVING while the store fails.
    static let storeBackedServices = ["pushgate.v1.Registry", "pushgate.v1.Channels", storeHealthService]

    /// Store trouble is logged (the first failure as an error, with the store's own words, which
    /// clients do not get; repeats as warnings) and turns the store-backed services NOT_SERVING
    /// (Registry, and `pushgate.store`) until a call succeeds again. Push stays SERVING: Send needs
    /// no store, and Publish answers UNAVAILABLE by itself.
    private static func watch(_ store: StoreHealth, board: HealthStatusBoard, log: Log) {
        store.onChange { change in
            switch change {
            case .failed(let error, let first):
                if first {
                    log.error("the store is failing", ["error": error.description])
                    for service in storeBackedServices { board.set(service, .notServing) }
                } else {
                    log.warning("store call failed", ["error": error.description])
                }
            case .recovered:
                log.warning("the store works again")
                for service in storeBackedServices { board.set(service, .serving) }
            }
        }
    }

    /// Every 10 s with no call running, when the process grew by 32 MiB or more since the last
    /// trim, each loop's heap (and this thread's) gives its free pages back to the system: after a
    /// burst RSS would otherwise stay at the burst's peak with nothing holding it (``HeapTrim``).
    private static func startHeapTrimmer(server: GRPCServer, group: EventLoopGroup, log: Log) -> Task<Void, Never> {
        Task.detached(priority: .background) {
            var settled = HeapTrim.residentBytes
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(10))
                guard !Task.isCancelled, server.activeCalls == 0 else { continue }
                let before = HeapTrim.residentBytes
                guard before >= settled + 32 << 20 else {
                    settled = min(settled, before)
                    continue
                }
                for loop in group.loops {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        loop.execute {
                            HeapTrim.collectThisThread()
                            done.resume()
                        }
                    }
                }
                HeapTrim.collectThisThread()
                settled = HeapTrim.residentBytes
                log.debug(
                    "returned free heap to the system", ["rss_before": "\(before)", "rss_after": "\(settled)"])
            }
        }
    }

    /// The gRPC port actually bound (useful with port 0).
    public var localPort: Int { server.localPort }

    /// The `/metrics` port actually bound; nil when `metrics_listen` is off.
    public var metricsPort: Int? { metricsServer?.localPort }

    /// Reports NOT_SERVING, stops accepting, stops the loops and closes the store. Unfinished
    /// fan-outs stay in the store; their leases are released, so another instance sharing the store
    /// (or the next start) resumes them.
    ///
    /// Graceful: health turns NOT_SERVING and its watchers end, the listener closes, every client
    /// gets a two-phase GOAWAY, and calls in flight (a large Send included) finish, for at most
    /// `shutdown_timeout_seconds`; then what is left is cut, queued deliveries fail, and the store
    /// closes.
    public func stop() async {
        for service in Self.services {
            health.set(service, .notServing)
        }
        metricsServer?.setStopping()
        health.endWatches()
        events.finish()
        server.beginShutdown()
        let deadline = ContinuousClock.now + .seconds(configuration.shutdownTimeoutSeconds)
        while server.activeCalls > 0 && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let unfinished = server.activeCalls
        if unfinished > 0 {
            log.warning("shutdown timeout: cutting calls still running", ["calls": "\(unfinished)"])
        }
        heapTrimmer.cancel()
        fanOut.stop()
        delivery.shutdown()
        channelClients.shutdown()
        await fanOut.drain()
        deliveryLogPurger.cancel()
        await webhooks.stop()
        demo?.close()
        metricsServer?.close()
        group.shutdown()
        await store.close()
    }
}
