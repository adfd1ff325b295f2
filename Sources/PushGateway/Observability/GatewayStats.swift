import PushDelivery
import PushMetrics
import PushPosix
import PushProto
import PushStore

/// `Push.GetStats`: this instance's figures for the apps a key may use, read from the same counters
/// and clients `/metrics` reads (so the console and Prometheus never disagree), without the metrics
/// listener: the console calls it on the API port with the operator's key.
struct GatewayStats: Sendable {
    let live: LiveSettings
    let metrics: GatewayMetrics
    let fanOut: FanOut
    let startedAt = unixMilliseconds()

    func stats(for caller: Caller) -> PushgateV1.Stats {
        var stats = PushgateV1.Stats()
        stats.instance = fanOut.policy.owner
        stats.time = unixMilliseconds()
        stats.startedAt = startedAt
        stats.keyName = caller.name
        stats.admin = caller.isAdmin
        switch caller.apps {
        case .all: stats.keyApps = ["*"]
        case .only(let names): stats.keyApps = names.sorted()
        }
        let clients = live.clients
        let now = unixSeconds()
        stats.apps = live.configuration.apps.filter { caller.apps.contains($0.name) }.map { app in
            var entry = PushgateV1.AppStats()
            entry.app = app.name
            entry.platform = app.platform.rawValue
            entry.connectionsConfigured = Int32(clamping: app.connections)
            if let client = clients[app.name] {
                entry.connectionsOpen = Int32(clamping: client.openConnections)
                entry.streamsInFlight = Int32(clamping: client.streamsInFlight)
                entry.queueDepth = Int32(clamping: client.heldRequests)
                if let issued = client.credentialIssuedAt { entry.credentialAgeSeconds = max(0, now - issued) }
            }
            entry.handshakeRefusals = Int64(metrics.handshakeRefusals(app: app.name))
            entry.fanoutHeld = Int64(metrics.fanOutHolds(app: app.name, event: "held").value)
            entry.fanoutGivenUp = Int64(metrics.fanOutHolds(app: app.name, event: "given_up").value)
            entry.outcomes = (metrics.notifications(app: app.name)?.outcomes() ?? []).map { outcome in
                var count = PushgateV1.OutcomeCount()
                count.status = PushgateV1.Status(outcome.status)
                count.reason = outcome.reason
                count.count = Int64(outcome.count)
                return count
            }
            return entry
        }
        stats.fanoutsRunning = Int32(clamping: fanOut.activeCount)
        stats.residentMemoryBytes = Int64(ProcessSample.readSelf()?.rssKiB ?? 0) * 1024
        return stats
    }
}
