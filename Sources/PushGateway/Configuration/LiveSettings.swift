import PushAPNs
import PushDelivery
import PushPosix
import PushSync

/// What SIGHUP can change while the process and its connections stay up: the configuration's apps
/// (with an APNs client each) and its API keys. Every call reads the current snapshot once and works
/// with it; a reload swaps the snapshot. Thread-safe; reads are a lock and a retain.
final class LiveSettings: Sendable {
    struct Snapshot: Sendable {
        var configuration: GatewayConfiguration
        var clients: [String: any DeliveryClient]
    }

    private let state: Locked<Snapshot>

    init(configuration: GatewayConfiguration, clients: [String: any DeliveryClient]) {
        state = Locked(Snapshot(configuration: configuration, clients: clients))
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
