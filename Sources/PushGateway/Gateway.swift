import PushAPNs
import PushGRPC
import PushPosix

/// A running Pushgate: event loops, the gRPC listener, and the services behind it.
public final class Gateway: Sendable {
    public let configuration: GatewayConfiguration
    /// The mock APNs of demo mode (no apps configured), nil otherwise.
    private let demo: DemoProvider?
    public let health: HealthStatusBoard
    private let group: EventLoopGroup
    private let server: GRPCServer
    private let delivery: NotificationDelivery

    /// Starts the loops and listens; returns once the port is bound.
    public init(configuration: GatewayConfiguration, log: Log) throws {
        var configuration = configuration
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
            clients = try APNsClientFactory.makeClients(configuration, group: group, log: log)
        } catch {
            group.shutdown()
            throw error
        }
        self.configuration = configuration
        delivery = NotificationDelivery(clients: clients, queueLimit: configuration.queueLimit)
        let services = [
            HealthService.make(board: health),
            PushService.make(configuration: configuration, delivery: delivery),
            RegistryService.make(configuration: configuration),
        ]
        var grpc = GRPCServerConfiguration()
        grpc.host = configuration.listenHost
        grpc.port = configuration.listenPort
        grpc.maxMessageSize = configuration.maxMessageBytes
        grpc.maxConcurrentStreams = UInt32(configuration.maxConcurrentStreams)
        do {
            server = try GRPCServer(configuration: grpc, services: services, group: group)
        } catch {
            group.shutdown()
            throw error
        }
        for service in ["", "pushgate.v1.Push", "pushgate.v1.Registry"] {
            health.set(service, .serving)
        }
        log.info(
            "listening", ["address": "\(configuration.listenHost):\(server.localPort)", "loops": "\(configuration.loops)",
                          "apps": configuration.apps.map(\.name).joined(separator: ",")])
    }

    /// The gRPC port actually bound (useful with port 0).
    public var localPort: Int { server.localPort }

    /// Reports NOT_SERVING, stops accepting and stops the loops.
    public func stop() {
        for service in ["", "pushgate.v1.Push", "pushgate.v1.Registry"] {
            health.set(service, .notServing)
        }
        server.close()
        delivery.shutdown()
        demo?.server.close()
        group.shutdown()
    }
}
