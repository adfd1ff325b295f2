import PushAPNs
import PushGRPC
import PushMetrics
import PushPosix
import PushStore

/// A running Pushgate: event loops, the store, the APNs clients, the fan-out, the gRPC listener and
/// the services behind it.
public final class Gateway: Sendable {
    public let configuration: GatewayConfiguration
    public let health: HealthStatusBoard
    private let group: EventLoopGroup
    private let server: GRPCServer
    private let metrics: GatewayMetrics
    /// `/metrics` and `/healthz` (config `metrics_listen`); nil when off.
    private let metricsServer: MetricsHTTPServer?
    private let delivery: NotificationDelivery
    private let store: any Store
    private let fanOut: FanOut
    /// The mock APNs of demo mode (no apps configured), nil otherwise.
    private let demo: DemoProvider?
    private let log: Log

    /// Opens the store, starts the loops and listens; resumes unfinished fan-outs. Returns once the
    /// port is bound.
    public static func start(configuration: GatewayConfiguration, log: Log) async throws -> Gateway {
        let store: SQLiteStore
        do {
            store = try await SQLiteStore.open(path: configuration.storePath)
        } catch {
            throw ConfigurationError("store \(configuration.storePath.debugDescription): \(error)")
        }
        do {
            let gateway = try Gateway(configuration: configuration, store: store, log: log)
            await gateway.fanOut.resumeUnfinished()
            return gateway
        } catch {
            await store.close()
            throw error
        }
    }

    private init(configuration: GatewayConfiguration, store: any Store, log: Log) throws {
        var configuration = configuration
        self.log = log
        self.store = store
        health = HealthStatusBoard()
        let group = try EventLoopGroup(loopCount: configuration.loops, namePrefix: "pushgate-loop")
        self.group = group
        let clients: [String: APNsClient]
        do {
            if configuration.apps.isEmpty && configuration.demoWhenNoApps {
                let demo = try DemoProvider(group: group)
                configuration.apps = [demo.app]
                self.demo = demo
                log.warning(
                    "DEMO MODE: no apps are configured, so app \"demo\" delivers to a MOCK APNs started by this "
                        + "process; nothing reaches Apple. Configure apps to send for real.",
                    ["mock": "127.0.0.1:\(demo.server.localPort)", "app": DemoProvider.appName,
                     "bundle_id": DemoProvider.bundleID])
            } else {
                demo = nil
            }
            metrics = GatewayMetrics(apps: configuration.apps)
            clients = try APNsClientFactory.makeClients(configuration, group: group, log: log, metrics: metrics)
        } catch {
            group.shutdown()
            throw error
        }
        self.configuration = configuration
        delivery = NotificationDelivery(clients: clients, queueLimit: configuration.queueLimit, metrics: metrics)
        let fanOut = FanOut(store: store, apps: configuration.apps, clients: clients, log: log, metrics: metrics)
        metrics.registerGauges(clients: clients, fanOut: fanOut)
        self.fanOut = fanOut
        let publish = PublishService(configuration: configuration, store: store, fanOut: fanOut)
        let services = [
            HealthService.make(board: health),
            PushService.make(configuration: configuration, delivery: delivery, publish: publish, metrics: metrics),
            RegistryService(configuration: configuration, store: store).make(),
        ]
        var grpc = GRPCServerConfiguration()
        grpc.host = configuration.listenHost
        grpc.port = configuration.listenPort
        grpc.maxMessageSize = configuration.maxMessageBytes
        grpc.maxConcurrentStreams = UInt32(configuration.maxConcurrentStreams)
        grpc.callObserver = metrics.rpc
        do {
            server = try GRPCServer(configuration: grpc, services: services, group: group)
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
        log.info(
            "listening",
            ["address": "\(configuration.listenHost):\(server.localPort)", "loops": "\(configuration.loops)",
             "apps": configuration.apps.map(\.name).joined(separator: ","), "store": configuration.storePath])
        if let metricsServer, let (host, _) = configuration.metricsListen {
            log.info("metrics listening", ["address": "\(host):\(metricsServer.localPort)", "paths": "/metrics,/healthz"])
        }
    }

    static let services = ["", "pushgate.v1.Push", "pushgate.v1.Registry"]

    /// The gRPC port actually bound (useful with port 0).
    public var localPort: Int { server.localPort }

    /// The `/metrics` port actually bound; nil when `metrics_listen` is off.
    public var metricsPort: Int? { metricsServer?.localPort }

    /// Reports NOT_SERVING, stops accepting, stops the loops and closes the store. Unfinished
    /// fan-outs stay in the store and resume at the next start.
    public func stop() async {
        for service in Self.services {
            health.set(service, .notServing)
        }
        metricsServer?.setStopping()
        server.close()
        fanOut.stop()
        delivery.shutdown()
        demo?.server.close()
        metricsServer?.close()
        group.shutdown()
        await store.close()
    }
}
