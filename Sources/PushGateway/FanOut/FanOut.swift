import PushAPNs
import PushCore
import PushDelivery
import PushMetrics
import PushPosix
import PushStore
import PushSync

/// Delivers published messages in the background, in leased chunks that any instance sharing the
/// store may work.
///
/// A message's fan-out is split into chunks (`fanout.chunk_size` subscriptions of its topic; a
/// direct publish is one chunk). Up to `fanout.workers` workers per instance each claim a chunk
/// (`Store.claimFanOutChunk`, `FOR UPDATE SKIP LOCKED` on PostgreSQL), read it a page at a time, send
/// each page through the apps' clients, and commit the page's counts and cursor before the chunk's
/// resume point moves past it; the lease is renewed with every commit and every third of the lease.
/// An instance that dies loses its leases, and another claims the chunks and resumes after their
/// last committed cursors: every subscribed endpoint gets the message at least once, and the
/// duplicate window is the pages in flight (``pagesInFlight`` × page size per chunk being worked).
/// SQLite runs the same code with one instance: its leases are released when the store opens.
final class FanOut: Sendable {
    /// Subscriptions read, sent and committed together.
    let pageSize: Int
    let settings: FanOutSettings
    /// This process's claims; a new owner id every start.
    let policy: FanOutLeasePolicy
    let store: any Store
    let live: LiveSettings
    let log: Log
    let events: DeliveryEvents
    let metrics: GatewayMetrics?

    private struct State {
        var workers: [Int: Task<Void, Never>] = [:]
        var nextWorker = 0
        /// Set by `kick`: work may have appeared since a worker last found none.
        var pending = false
        var stopped = false
        var chunksInProgress = 0
        var poller: Task<Void, Never>?
    }
    private let state = Locked(State())

    init(
        store: any Store, live: LiveSettings, events: DeliveryEvents, log: Log,
        metrics: GatewayMetrics? = nil, pageSize: Int = 1000, settings: FanOutSettings = FanOutSettings()
    ) {
        self.store = store
        self.events = events
        self.live = live
        self.log = log
        self.metrics = metrics
        self.pageSize = pageSize
        self.settings = settings
        policy = FanOutLeasePolicy(
            owner: "pushgate-" + RandomUUID.make(), leaseMillis: Int64(settings.leaseSeconds) * 1000,
            chunkSize: settings.chunkSize)
    }

    /// A message was committed here: start on it now rather than at the next poll.
    func published() { kick() }

    /// Starts working: logs what a previous run (or a dead instance) left unfinished, then looks for
    /// work now and every `poll_ms`.
    func resumeUnfinished() async {
        do {
            let unfinished = try await store.unfinishedMessages()
            if !unfinished.isEmpty { log.info("resuming fan-outs", ["messages": "\(unfinished.count)"]) }
        } catch {
            log.error("cannot read unfinished messages", ["error": "\(error)"])
        }
        let interval = Duration.milliseconds(settings.pollMilliseconds)
        let poller = Task { [weak self] in
            while !Task.isCancelled {
                self?.kick()
                try? await Task.sleep(for: interval)
            }
        }
        state.withLock { $0.poller = poller }
    }

    /// Stops claiming and cancels the chunks in progress (their progress stays committed).
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.poller?.cancel()
            for task in state.workers.values { task.cancel() }
        }
    }

    /// After ``stop()`` and the delivery engine's shutdown: waits (briefly) for the workers to end,
    /// then releases this instance's leases so other instances resume its chunks at once.
    func drain() async {
        let deadline = ContinuousClock.now + .seconds(5)
        while state.withLock({ !$0.workers.isEmpty }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        do {
            try await store.releaseFanOutLeases(owner: policy.owner)
        } catch {
            log.warning("could not release fan-out leases; they run out by themselves", ["error": "\(error)"])
        }
    }

    /// Chunks this instance is working on.
    var activeCount: Int { state.withLock { $0.chunksInProgress } }

    /// Marks work as pending and starts a worker if there is room.
    private func kick() {
        state.withLock { state in
            state.pending = true
            guard !state.stopped, state.workers.count < settings.workers else { return }
            let id = state.nextWorker
            state.nextWorker += 1
            state.workers[id] = Task { [self] in
                await work()
                _ = self.state.withLock { $0.workers.removeValue(forKey: id) }
            }
        }
    }

    /// Claims and works chunks until there are none (or the store fails: the poller retries).
    private func work() async {
        while !Task.isCancelled {
            state.withLock { $0.pending = false }
            let chunk: FanOutChunk?
            do {
                chunk = try await store.claimFanOutChunk(policy, now: unixMilliseconds())
            } catch {
                log.error("cannot claim fan-out work", ["error": "\(error)"])
                return
            }
            guard let chunk else {
                // A kick since the claim began may have missed this worker: claim again.
                if state.withLock({ $0.pending && !$0.stopped }) { continue }
                return
            }
            state.withLock { $0.chunksInProgress += 1 }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.deliver(chunk) }
                group.addTask { await self.keepLease(chunk) }
                // Whichever ends first ends the other: the chunk is done, or its lease was lost.
                await group.next()
                group.cancelAll()
            }
            state.withLock { $0.chunksInProgress -= 1 }
        }
    }

    /// Renews the chunk's lease every third of its length until cancelled; returns if another
    /// instance took the chunk over.
    private func keepLease(_ chunk: FanOutChunk) async {
        let every = Duration.milliseconds(max(1, policy.leaseMillis / 3))
        while !Task.isCancelled {
            try? await Task.sleep(for: every)
            if Task.isCancelled { return }
            do {
                _ = try await store.renewFanOutLease(chunk, policy: policy, now: unixMilliseconds())
            } catch  where error.code == .conflict || error.code == .notFound {
                log.warning(
                    "fan-out chunk taken over by another instance; stopping it here",
                    ["message_id": chunk.message.id, "chunk": "\(chunk.number)"])
                return
            } catch {
                log.warning("cannot renew a fan-out lease", ["message_id": chunk.message.id, "error": "\(error)"])
            }
        }
    }

    // MARK: One chunk

    /// Pages sent at once: while one page waits for the provider, the next is read and sent. Pages
    /// are committed in order, so the resume cursor only moves past pages that are done; the
    /// duplicate window after a crash is these pages, per chunk being worked.
    static let pagesInFlight = 3

    private func deliver(_ chunk: FanOutChunk) async {
        let message = chunk.message
        // One chunk works with the apps and clients configured when it starts (a reload during a
        // fan-out applies to the next chunk).
        let snapshot = live.snapshot
        let apps = Dictionary(
            snapshot.configuration.apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let clients = snapshot.clients
        do {
            if let endpointID = message.endpointID {
                var plan: MessagePlan
                var targets: [FanOutTarget] = []
                do {
                    let endpoint = try await store.endpoint(id: endpointID)
                    let key = apps[endpoint.app]?.platformKey ?? .apns
                    plan = try MessagePlan(message, target: .endpoint(key), apps: apps)
                    // A resumed chunk whose recipient is held sends to it as a held one (counted once).
                    if chunk.holds == 0 {
                        targets = [
                            FanOutTarget(
                                subscription: SubscriptionRecord(
                                    id: "", topic: "", endpointID: endpointID, filterPolicyJSON: ""),
                                endpoint: endpoint, cursor: "")
                        ]
                    }
                } catch let error as StoreError where error.code == .notFound {
                    // Deleted since the publish: nothing to send; the message is still finished.
                    plan = try MessagePlan(message, target: .endpoint(.apns), apps: apps)
                }
                let held: Int64
                if chunk.holds > 0 {
                    held = try await resumeHolds(chunk, plan: &plan)
                } else {
                    var counts = await send(prepare(targets, plan: &plan, clients: clients), messageID: message.id)
                    if targets.isEmpty {
                        counts.total = 1
                        counts.skipped = 1
                    }
                    // Stopped (shutdown): leave it uncommitted, so the restart sends it again.
                    if Task.isCancelled { return }
                    held = try await commit(chunk, cursor: "", counts: counts)
                }
                if Task.isCancelled { return }
                try await finishOrPark(chunk, cursor: "", plan: plan, held: held)
                return
            }
            var plan = try MessagePlan(message, target: .topic, apps: apps)
            var held = Int64(chunk.holds)
            if chunk.holds > 0 {
                held = try await resumeHolds(chunk, plan: &plan)
                if Task.isCancelled { return }
            }
            var cursor = chunk.cursor
            var inFlight: [(sending: Task<FanOutCounts, Never>, cursor: String)] = []
            var finished = false
            while !finished && !Task.isCancelled {
                let page = try await store.fanOutPage(
                    topic: message.topic ?? "", after: cursor, through: chunk.end, limit: pageSize)
                // The clients as of now (a reload may have replaced a retired one).
                let prepared = prepare(page.items, plan: &plan, clients: live.clients)
                inFlight.append(
                    (Task { await self.send(prepared, messageID: message.id) }, page.items.last?.cursor ?? cursor))
                cursor = inFlight.last!.cursor
                finished = page.nextCursor == nil
                while inFlight.count >= Self.pagesInFlight || (finished && !inFlight.isEmpty) {
                    let oldest = inFlight.removeFirst()
                    let counts = await oldest.sending.value
                    // Stopped (shutdown, or the lease was lost): its requests may have failed only
                    // because of that; the page stays uncommitted and whoever resumes resends it.
                    if Task.isCancelled { break }
                    held = try await commit(chunk, cursor: oldest.cursor, counts: counts)
                }
            }
            for page in inFlight { page.sending.cancel() }
            if finished && !Task.isCancelled { try await finishOrPark(chunk, cursor: cursor, plan: plan, held: held) }
        } catch let error as StoreError where error.code == .conflict {
            log.warning(
                "fan-out chunk taken over by another instance; stopping it here",
                ["message_id": message.id, "chunk": "\(chunk.number)", "error": "\(error)"])
        } catch {
            // The store failed (or the message vanished): leave the progress as committed; the lease
            // runs out and the chunk is resumed after the last committed page.
            log.error("fan-out stopped", ["message_id": message.id, "chunk": "\(chunk.number)", "error": "\(error)"])
        }
    }

    /// Records a page: its counts, cursor and holds (recipients whose provider could not take it);
    /// answers how many recipients the chunk holds now.
    @discardableResult
    func commit(
        _ chunk: FanOutChunk, cursor: String, counts: FanOutCounts, releasing: [String] = []
    ) async throws(StoreError) -> Int64 {
        let message = chunk.message
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
        let held = try await store.recordChunkProgress(
            chunk, policy: policy, cursor: cursor,
            counts: ProgressCounts(
                total: counts.total, delivered: counts.delivered, rejected: counts.rejected, failed: counts.failed,
                skipped: counts.skipped),
            state: .fanningOut,
            holds: FanOutHoldChanges(
                holding: counts.hold.map { FanOutHold(endpointID: $0.id, reason: $0.reason) }, releasing: releasing),
            now: unixMilliseconds())
        for held in counts.hold { metrics?.fanOutHolds(app: held.app, event: "held").increment() }
        return held
    }

    /// One page sorted out: who is skipped or failed now, and per app the notification (built once
    /// per message and app) and its recipients.
    struct PreparedPage: Sendable {
        var counts: FanOutCounts
        var deliveries:
            [(
                notification: PreparedPush, recipients: [FanOutTarget], client: any DeliveryClient,
                counters: NotificationCounters?
            )] = []
    }

    func prepare(
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
    func send(_ page: PreparedPage, messageID: String) async -> FanOutCounts {
        var counts = page.counts
        let events = self.events
        let hold = settings.maxHoldSeconds > 0
        await withTaskGroup(of: FanOutCounts.self) { group in
            for delivery in page.deliveries {
                group.addTask {
                    await Self.deliver(
                        delivery.notification, to: delivery.recipients, through: delivery.client, events: events,
                        messageID: messageID, counters: delivery.counters, hold: hold)
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
            log.info(
                "endpoint token replaced by the provider's canonical one",
                ["app": endpoint.app, "endpoint_id": endpoint.id, "message_id": messageID])
        } catch  where error.code == .alreadyExists {
            let reason = "CanonicalTokenOfEndpoint:\(error.existingID ?? "")"
            try? await store.disableEndpoints([(endpoint.id, reason)])
            events.endpointDisabled(
                app: endpoint.app, endpointID: endpoint.id, token: endpoint.token, reason: reason, messageID: messageID)
        } catch {
            log.warning("could not store a canonical token", ["endpoint_id": endpoint.id, "error": "\(error)"])
        }
    }

    /// Sends one app's share of a page, waiting for room in the app's queue rather than failing:
    /// fan-out is background work and may wait for Sends. A recipient the provider could not take
    /// (``holdsFor(_:)``) is held rather than FAILED when `hold` is on.
    private static func deliver(
        _ template: PreparedPush, to recipients: [FanOutTarget], through client: any DeliveryClient,
        events: DeliveryEvents, messageID: String, counters: NotificationCounters?, hold: Bool
    ) async -> FanOutCounts {
        let notification = template.with(tokens: recipients.map(\.endpoint.token))
        while !client.reserve(recipients.count) {
            try? await Task.sleep(for: .milliseconds(20))
            if Task.isCancelled { return FanOutCounts(total: 0, failed: Int64(recipients.count)) }
        }
        let results = await client.sendAndWait(notification, deadline: .now + .seconds(600))
        var counts = FanOutCounts(total: 0)
        var final: [DeliveryResult] = []
        final.reserveCapacity(results.count)
        for (recipient, result) in zip(recipients, results) {
            if hold && holdsFor(result) {
                counts.hold.append((recipient.endpoint.id, result.reason, recipient.endpoint.app))
                continue
            }
            final.append(result)
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
        counters?.record(final)
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
    /// Recipients held for their provider, with the failure that held them (in no count yet).
    var hold: [(id: String, reason: String, app: String)] = []

    mutating func add(_ other: FanOutCounts) {
        total += other.total
        delivered += other.delivered
        rejected += other.rejected
        failed += other.failed
        skipped += other.skipped
        disable += other.disable
        retoken += other.retoken
        hold += other.hold
    }
}
