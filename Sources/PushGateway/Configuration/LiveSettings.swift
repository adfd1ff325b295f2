import PushDelivery
import PushPosix
import PushSync

/// What SIGHUP can change while the process and its connections stay up: the configuration's apps
/// (with an APNs client each) and its API keys. Every call reads the current snapshot once and works
/// with it; a reload swaps the snapshot. Thread-safe; reads are a lock and a retain.
final class LiveSettings: Sendable {
    /// Immutable, so that reading it is one retain (a struct copy of the configuration was a retain
    /// and a release per field, on every Send).
    final class Snapshot: Sendable {
        let configuration: GatewayConfiguration
        let clients: [String: any DeliveryClient]
        /// The configuration's apps with their clients and series.
        let routes: AppRoutes

        init(configuration: GatewayConfiguration, clients: [String: any DeliveryClient], metrics: GatewayMetrics?) {
            self.configuration = configuration
            self.clients = clients
            routes = AppRoutes(
                configuration.apps.map { app in
                    AppRoute(app, client: clients[app.name], counters: metrics?.notifications(app: app.name))
                })
        }
    }

    private let state: Locked<Snapshot>

    init(configuration: GatewayConfiguration, clients: [String: any DeliveryClient], metrics: GatewayMetrics?) {
        state = Locked(Snapshot(configuration: configuration, clients: clients, metrics: metrics))
    }

    var snapshot: Snapshot { state.withLock { $0 } }
    var configuration: GatewayConfiguration { state.withLock { $0.configuration } }
    var clients: [String: any DeliveryClient] { state.withLock { $0.clients } }

    /// Installs a new snapshot; answers the one it replaces.
    func replace(_ snapshot: Snapshot) -> Snapshot {
        state.withLock { state in
            defer { state = snapshot }
            return state
        }
    }
}
