import PushAPNs
import PushDelivery
import PushCore
import PushStore
import Synchronization

/// Delivers published messages in the background: reads a topic's subscriptions a page at a time,
/// sends each page through the apps' APNs clients, and commits the page's counts and cursor before
/// reading the next. After a crash or restart, ``resumeUnfinished()`` goes on after the last
/// committed cursor: every subscribed endpoint gets the message at least once, and the duplicate
/// window is one page.
final class FanOut: Sendable {
    /// Subscriptions read, sent and committed together.
    let pageSize: Int
    private let store: any Store
    private let live: LiveSettings
    private let log: Log
    private let events: DeliveryEvents
    private let metrics: GatewayMetrics?
    private let running = Mutex<[String: Task<Void, Never>]>([:])

    init(
        store: any Store, live: LiveSettings, events: DeliveryEvents, log: Log,
        metrics: GatewayMetrics? = nil, pageSize: Int = 1000
    ) {
        self.store = store
        self.events = events
        self.live = live
        self.log = log
        self.metrics = metrics
        self.pageSize = pageSize
    }

    /// Starts delivering a committed message.
    func start(_ message: MessageRecord) {
        running.withLock { running in
            guard running[message.id] == nil else { return }
            running[message.id] = Task { [self] in
                await deliver(message)
                _ = self.running.withLock { $0.removeValue(forKey: message.id) }
            }
        }
    }

    /// Restarts the messages a previous run left unfinished.
    func resumeUnfinished() async {
        do {
            let unfinished = try await store.unfinishedMessages()
            if !unfinished.isEmpty { log.info("resuming fan-outs", ["messages": "\(unfinished.count)"]) }
            for message in unfinished { start(message) }
        } catch {
            log.error("cannot read unfinished messages", ["error": "\(error)"])
        }
    }

    /// Stops working (the store keeps the progress; a restart resumes).
    func stop() {
        running.withLock { running in
            for task in running.values { task.cancel() }
        }
    }

    /// Fan-outs in progress.
    var activeCount: Int { running.withLock { $0.count } }

    // MARK: One message

    /// Pages sent at once: while one page waits for APNs, the next is read and sent. Pages are
    /// committed in order, so the resume cursor only moves past pages that are done; the duplicate
    /// window after a crash is these pages.
    static let pagesInFlight = 3

    private func deliver(_ message: MessageRecord) async {
        // One message works with the apps and clients configured when it starts (a reload during
        // a fan-out applies to the next message).
        let snapshot = live.snapshot
        let apps = Dictionary(
            snapshot.configuration.apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let clients = snapshot.clients
        do {
            if let endpointID = message.endpointID {
                let endpoint = try await store.endpoint(id: endpointID)
                let key = apps[endpoint.app]?.platformKey ?? .apns
                var plan = try MessagePlan(message, target: .endpoint(key), apps: apps)
                let target = FanOutTarget(
                    subscription: SubscriptionRecord(id: "", topic: "", endpointID: endpointID, filterPolicyJSON: ""),
                    endpoint: endpoint, cursor: "done")
                let counts = await send(prepare([target], plan: &plan, clients: clients), messageID: message.id)
                // Stopped (shutdown): leave it uncommitted, so the restart sends it again.
                if Task.isCancelled { return }
                try await commit(message, cursor: "done", counts: counts, last: true, plan: plan)
                return
            }
            var plan = try MessagePlan(message, target: .topic, apps: apps)
            var cursor = message.cursor
            var inFlight: [(sending: Task<FanOutCounts, Never>, cursor: String)] = []
            var finished = false
            while !finished && !Task.isCancelled {
                let page = try await store.fanOutPage(topic: message.topic ?? "", after: cursor, limit: pageSize)
                // The clients as of now (a reload may have replaced a retired one).
                let prepared = prepare(page.items, plan: &plan, clients: live.clients)
                inFlight.append((Task { await self.send(prepared, messageID: message.id) }, page.items.last?.cursor ?? cursor))
                cursor = inFlight.last!.cursor
                finished = page.nextCursor == nil
                while inFlight.count >= Self.pagesInFlight || (finished && !inFlight.isEmpty) {
                    let oldest = inFlight.removeFirst()
                    let counts = await oldest.sending.value
                    // Stopped (shutdown): its requests may have failed only because of that; the
                    // page stays uncommitted and the restart resends it.
                    if Task.isCancelled { return }
                    try await commit(
                        message, cursor: oldest.cursor, counts: counts, last: finished && inFlight.isEmpty, plan: plan)
                }
            }
            for page in inFlight { page.sending.cancel() }
        } catch {
            // The store failed (or the message vanished): leave the progress as committed; a restart
            // resumes after the last committed page.
            log.error("fan-out stopped", ["message_id": message.id, "error": "\(error)"])
        }
    }

    private func commit(
        _ message: MessageRecord, cursor: String, counts: FanOutCounts, last: Bool, plan: MessagePlan
    ) async throws(StoreError) {
        if !counts.disable.isEmpty {
            try await store.disableEndpoints(counts.disable.map { ($0.id, $0.reason) })
            for endpoint in counts.disable {
                events.endpointDisabled(
                    app: endpoint.app, endpointID: endpoint.id, token: endpoint.token, reason: endpoint.reason,
                    messageID: message.id)
            }
        }
        for endpoint in counts.retoken {
            await adoptCanonicalToken(endpoint, messageID: message.id)
        }
        let state: MessageState = last ? (plan.expired ? .expired : .completed) : .fanningOut
        try await store.recordProgress(
            messageID: message.id, cursor: cursor, delivered: counts.delivered, rejected: counts.rejected,
            failed: counts.failed, skipped: counts.skipped, total: counts.total, state: state)
    }

    /// One page sorted out: who is skipped or failed now, and per app the notification (built once
    /// per message and app) and its recipients.
    private struct PreparedPage: Sendable {
        var counts: FanOutCounts
        var deliveries: [
            (notification: PreparedPush, recipients: [FanOutTarget], client: any DeliveryClient,
             counters: NotificationCounters?)
        ] = []
    }

    private func prepare(
        _ targets: [FanOutTarget], plan: inout MessagePlan, clients: [String: any DeliveryClient]
    ) -> PreparedPage {
        var page = PreparedPage(counts: FanOutCounts(total: Int64(targets.count)))
        var byApp: [String: [FanOutTarget]] = [:]
        for target in targets {
            switch plan.decide(target) {
            case .skip: page.counts.skipped += 1
            case .fail: page.counts.failed += 1
            case .send: byApp[target.endpoint.app, default: []].append(target)
            }
        }
        for (app, recipients) in byApp {
            guard let client = clients[app], let notification = plan.notification(for: app) else {
                page.counts.skipped += Int64(recipients.count)
                continue
            }
            page.deliveries.append((notification, recipients, client, metrics?.notifications(app: app)))
        }
        return page
    }

    /// Sends one page; answers its counts once every recipient has a result.
    private func send(_ page: PreparedPage, messageID: String) async -> FanOutCounts {
        var counts = page.counts
        let events = self.events
        await withTaskGroup(of: FanOutCounts.self) { group in
            for delivery in page.deliveries {
                group.addTask {
                    await Self.deliver(
                        delivery.notification, to: delivery.recipients, through: delivery.client, events: events,
                        messageID: messageID, counters: delivery.counters)
                }
            }
            for await appCounts in group { counts.add(appCounts) }
        }
        return counts
    }

    /// The provider answered a delivery with the device's new token (an ADM canonical registration
    /// id): the endpoint takes it, so the next publish goes to the new one. When another endpoint of
    /// the app already holds that token, it covers the device and this one is disabled.
    private func adoptCanonicalToken(
        _ endpoint: (id: String, token: String, app: String), messageID: String
    ) async {
        do {
            _ = try await store.updateEndpoint(
                id: endpoint.id, normalizedToken: endpoint.token, enabled: nil, customUserData: nil)
            log.info("endpoint token replaced by the provider's canonical one",
                     ["app": endpoint.app, "endpoint_id": endpoint.id, "message_id": messageID])
        } catch where error.code == .alreadyExists {
            let reason = "CanonicalTokenOfEndpoint:\(error.existingID ?? "")"
            try? await store.disableEndpoints([(endpoint.id, reason)])
            events.endpointDisabled(
                app: endpoint.app, endpointID: endpoint.id, token: endpoint.token, reason: reason, messageID: messageID)
        } catch {
            log.warning("could not store a canonical token", ["endpoint_id": endpoint.id, "error": "\(error)"])
        }
    }

    /// Sends one app's share of a page, waiting for room in the app's queue rather than failing:
    /// fan-out is background work and may wait for Sends.
    private static func deliver(
        _ template: PreparedPush, to recipients: [FanOutTarget], through client: any DeliveryClient,
        events: DeliveryEvents, messageID: String, counters: NotificationCounters?
    ) async -> FanOutCounts {
        let notification = template.with(tokens: recipients.map(\.endpoint.token))
        while !client.reserve(recipients.count) {
            try? await Task.sleep(for: .milliseconds(20))
            if Task.isCancelled { return FanOutCounts(total: 0, failed: Int64(recipients.count)) }
        }
        let results = await client.sendAndWait(notification, deadline: .now + .seconds(600))
        counters?.record(results)
        var counts = FanOutCounts(total: 0)
        for (recipient, result) in zip(recipients, results) {
            events.result(result, app: recipient.endpoint.app, messageID: messageID, endpointID: recipient.endpoint.id)
            switch result.status {
            case .delivered:
                counts.delivered += 1
                if !result.canonicalToken.isEmpty {
                    counts.retoken.append((recipient.endpoint.id, result.canonicalToken, recipient.endpoint.app))
                }
            case .rejected:
                counts.rejected += 1
                if result.invalidatesToken {
                    counts.disable.append(
                        (recipient.endpoint.id, result.reason, recipient.endpoint.app, recipient.endpoint.token))
                }
            case .failed: counts.failed += 1
            }
        }
        return counts
    }
}

/// What one page added up to.
struct FanOutCounts: Sendable {
    var total: Int64
    var delivered: Int64 = 0
    var rejected: Int64 = 0
    var failed: Int64 = 0
    var skipped: Int64 = 0
    /// Endpoints whose token the provider declared dead, with the reason.
    var disable: [(id: String, reason: String, app: String, token: String)] = []
    /// Endpoints whose token the provider replaced with a canonical one, with the new token.
    var retoken: [(id: String, token: String, app: String)] = []

    mutating func add(_ other: FanOutCounts) {
        total += other.total
        delivered += other.delivered
        rejected += other.rejected
        failed += other.failed
        skipped += other.skipped
        disable += other.disable
        retoken += other.retoken
    }
}
