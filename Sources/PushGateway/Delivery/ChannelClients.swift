import PushAPNs
import PushCore
import PushDelivery
import PushPosix
import PushSync

/// The channel management clients of the APNs apps, made on an app's first channel request (most
/// apps never make one) from its push client, whose credentials they share. A reload that replaces
/// the app's push client replaces its channel client at the next request.
final class ChannelClients: Sendable {
    private struct Entry {
        let push: ObjectIdentifier
        let client: APNsClient
    }

    private let live: LiveSettings
    private let group: EventLoopGroup
    private let log: Log
    private let metrics: GatewayMetrics?
    private let entries = Locked<[String: Entry]>([:])

    init(live: LiveSettings, group: EventLoopGroup, log: Log, metrics: GatewayMetrics?) {
        self.live = live
        self.group = group
        self.log = log
        self.metrics = metrics
    }

    /// The channel client of `app` (an APNs app with a push client).
    func client(for app: AppConfiguration) throws(GRPCStatus) -> APNsClient {
        guard let push = live.clients[app.name] as? APNsClient else {
            throw GRPCStatus(.failedPrecondition, "app: \(app.name) has no APNs client")
        }
        let key = ObjectIdentifier(push)
        if let entry = entries.withLock({ $0[app.name] }), entry.push == key { return entry.client }
        let made: APNsClient
        do {
            made = try DeliveryClientFactory.makeChannelClient(
                app, push: push, group: group, log: log, metrics: metrics)
        } catch {
            throw GRPCStatus(.failedPrecondition, "app: \(error)")
        }
        let (chosen, replaced) = entries.withLock { entries -> (APNsClient, APNsClient?) in
            if let entry = entries[app.name], entry.push == key { return (entry.client, nil) }
            let old = entries[app.name]?.client
            entries[app.name] = Entry(push: key, client: made)
            return (made, old)
        }
        if chosen !== made { made.shutdown() }
        replaced?.shutdown()
        return chosen
    }

    func shutdown() {
        for entry in entries.withLock({ $0.values }) { entry.client.shutdown() }
    }
}
