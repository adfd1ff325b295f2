import PushCore
import PushDelivery
import PushMetrics
import PushStore
import PushSync

extension FanOut {
    /// Works one claimed chunk: carries out its ``FanOutChunkMachine``'s actions (store calls in
    /// turn, sends and lease renewals alongside) and feeds their results back, until the machine
    /// ends the claim. Cancelling the task (shutdown) stops the chunk: nothing more is committed.
    /// `lastPageRead` is called once the chunk has read its last page (what is left is sending and
    /// committing its pages in flight), so the worker can claim the next chunk meanwhile.
    func run(_ chunk: FanOutChunk, lastPageRead: @escaping @Sendable () -> Void = {}) async {
        let run = FanOutChunkRun(fanOut: self, chunk: chunk, lastPageRead: lastPageRead)
        await withTaskCancellationHandler {
            await run.run()
        } onCancel: {
            run.mailbox.post(.stop)
        }
    }
}

/// The driver of one chunk's machine: the part that talks to the store, the delivery clients,
/// metrics, events and the log.
private final class FanOutChunkRun: Sendable {
    typealias Machine = FanOutChunkMachine

    let fanOut: FanOut
    let chunk: FanOutChunk
    /// Events from sends, the lease timer and renewals, and the stop.
    let mailbox = FanOutMailbox<Machine.Event>()
    let sender: FanOutPageSender

    /// Set once the message is cancelled: a rate-capped send stops before its next slot.
    let cancelFlag = FanOutCancelFlag()

    /// Told when the last page has been read (see ``FanOut/run(_:lastPageRead:)``).
    let lastPageRead: @Sendable () -> Void

    /// Recipients a page reads: the fan-out's, but at most ``FanOut/pacedPageSize`` for a
    /// rate-capped message, whose pages mostly wait for their slots.
    let pageSize: Int

    init(fanOut: FanOut, chunk: FanOutChunk, lastPageRead: @escaping @Sendable () -> Void) {
        self.fanOut = fanOut
        self.chunk = chunk
        self.lastPageRead = lastPageRead
        let message = chunk.message
        pageSize = message.maxPerSecond > 0 ? min(fanOut.pageSize, FanOut.pacedPageSize) : fanOut.pageSize
        let pace =
            message.maxPerSecond > 0
            ? FanOutPace(
                store: fanOut.store, messageID: message.id, maxPerSecond: message.maxPerSecond, cancel: cancelFlag)
            : nil
        sender = FanOutPageSender(
            events: fanOut.events, metrics: fanOut.metrics, holds: fanOut.settings.maxHoldSeconds > 0,
            maxShare: pageSize, pace: pace, cancel: cancelFlag, deliveryLog: fanOut.deliveryLog)
    }

    /// What the driver keeps between actions (only ``run()`` touches it).
    private struct Work {
        var machine: Machine
        /// The message as it goes to each app; nil until made (a direct publish's needs its endpoint).
        var plan: MessagePlan?
        var sends: [Int: Task<Void, Never>] = [:]
        var renewal: Task<Void, Never>?
        /// Records of given-up recipients, written with the next commit.
        var records = FanOutRecords()
    }

    func run() async {
        let message = chunk.message
        // One chunk works with the apps and clients configured when it starts (a reload during a
        // fan-out applies to the next chunk).
        let snapshot = fanOut.live.snapshot
        let apps = Dictionary(
            snapshot.configuration.apps.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var work = Work(
            machine: Machine(
                chunk: chunk, settings: Machine.Settings(maxHoldSeconds: fanOut.settings.maxHoldSeconds),
                seed: UInt64.random(in: 0 ... .max)))
        let timer = startTimer()
        let hook = fanOut.register(messageID: message.id) { [self] in noticeCancel() }
        var actions: [Machine.Action]
        if message.endpointID == nil {
            do {
                work.plan = try MessagePlan(message, target: .topic, apps: apps)
                actions = work.machine.start(now: unixMilliseconds())
            } catch {
                actions = work.machine.handle(.failed(error), now: unixMilliseconds())
            }
        } else {
            actions = work.machine.start(now: unixMilliseconds())
        }
        running: while true {
            while !actions.isEmpty {
                let action = actions.removeFirst()
                if case .end = action { break running }
                if let event = await perform(action, &work, apps: apps, clients: snapshot.clients) {
                    actions += feed(event, to: &work.machine)
                }
            }
            let event = await mailbox.next()
            if case .sent(let page, _, _) = event { work.sends[page] = nil }
            actions = feed(event, to: &work.machine)
        }
        timer.cancel()
        fanOut.forget(messageID: message.id, key: hook)
        // Sends still under way belong to pages that stay uncommitted: whoever resumes sends them again.
        for send in work.sends.values { send.cancel() }
        // A renewal must not extend the lease after this claim let go of it.
        await work.renewal?.value
    }

    /// Feeds an event; a stopped task stops the machine first, so nothing more is committed.
    private func feed(_ event: Machine.Event, to machine: inout Machine) -> [Machine.Action] {
        let now = unixMilliseconds()
        if Task.isCancelled, !machine.isDone { return machine.handle(.stop, now: now) }
        return machine.handle(event, now: now)
    }

    /// Carries out one action; store calls answer their event here, the rest later by the mailbox.
    private func perform(
        _ action: Machine.Action, _ work: inout Work, apps: [String: AppConfiguration],
        clients: [String: any DeliveryClient]
    ) async -> Machine.Event? {
        let store = fanOut.store
        do {
            switch action {
            case .readEndpoint(let id):
                do {
                    let endpoint = try await store.endpoint(id: id)
                    let key = apps[endpoint.app]?.platformKey ?? .apns
                    work.plan = try MessagePlan(chunk.message, target: .endpoint(key), apps: apps)
                    return .endpointRead(endpoint)
                } catch let error as StoreError where error.code == .notFound {
                    work.plan = try MessagePlan(chunk.message, target: .endpoint(.apns), apps: apps)
                    return .endpointRead(nil)
                }
            case .readHolds:
                return .holdsRead(try await store.heldRecipients(chunk))
            case .readPage(let cursor):
                guard let target = chunk.message.target else {
                    throw StoreError(.internal, message: "message \(chunk.message.id) has no single target")
                }
                let page = try await store.fanOutPage(
                    target, after: cursor, through: chunk.end, limit: pageSize)
                if page.nextCursor == nil { lastPageRead() }
                return .pageRead(page.items, isLast: page.nextCursor == nil)
            case .send(let id, let targets, let purpose):
                guard var plan = work.plan else { preconditionFailure("a fan-out send before the message's plan") }
                // A direct publish's recipient goes through the clients as of the chunk's start; pages
                // and held recipients through the ones as of now (a reload may have replaced one).
                let prepared = sender.prepare(
                    targets, plan: &plan, clients: purpose == .endpoint ? clients : fanOut.live.clients,
                    messageID: chunk.message.id)
                work.plan = plan
                let expired = plan.expired
                work.sends[id] = Task { [self] in
                    let counts = await sender.sendPage(prepared, messageID: chunk.message.id)
                    mailbox.post(.sent(page: id, counts, planExpired: expired))
                }
                return nil
            case .giveUp(let recipients):
                for recipient in recipients { report(givenUp: recipient, into: &work.records) }
                return nil
            case .commit(let cursor, let counts, let releasing):
                let held = try await commit(cursor: cursor, counts: counts, releasing: releasing, records: work.records)
                work.records = FanOutRecords()
                return .committed(held: held)
            case .finish(let cursor, let state):
                try await store.recordChunkProgress(
                    chunk, policy: fanOut.policy, cursor: cursor, counts: ProgressCounts(), state: state,
                    holds: .none, records: work.records, now: unixMilliseconds())
                wrote(work.records)
                work.records = FanOutRecords()
                return .finished
            case .park(let cursor, let until, let now):
                try await store.recordChunkProgress(
                    chunk, policy: fanOut.policy, cursor: cursor, counts: ProgressCounts(), state: .fanningOut,
                    holds: FanOutHoldChanges(parkUntil: until), records: work.records, now: now)
                wrote(work.records)
                work.records = FanOutRecords()
                return .finished
            case .renewLease:
                work.renewal = Task { [self] in
                    do throws(StoreError) {
                        _ = try await store.renewFanOutLease(chunk, policy: fanOut.policy, now: unixMilliseconds())
                        mailbox.post(.leaseRenewed)
                    } catch {
                        mailbox.post(.leaseRenewalFailed(error))
                    }
                }
                return nil
            case .log(let line):
                write(line)
                return nil
            case .end:
                return nil
            }
        } catch {
            return .failed(error)
        }
    }

    /// The chunk's one timer: every ``FanOut/cancelPollMilliseconds`` it asks the store whether the
    /// message was cancelled (by any instance; then ``noticeCancel()``, once), and every third of
    /// the lease it posts ``FanOutChunkMachine/Event/leaseDue``; until cancelled.
    private func startTimer() -> Task<Void, Never> {
        let tick = Int64(FanOut.cancelPollMilliseconds)
        let renewEvery = max(1, fanOut.policy.leaseMillis / 3)
        return Task { [self, store = fanOut.store, id = chunk.message.id] in
            var sinceRenewal: Int64 = 0
            var cancelSeen = false
            while !Task.isCancelled {
                let step = min(tick, renewEvery - sinceRenewal)
                try? await Task.sleep(for: .milliseconds(step))
                if Task.isCancelled { return }
                sinceRenewal += step
                if sinceRenewal >= renewEvery {
                    sinceRenewal = 0
                    mailbox.post(.leaseDue)
                }
                if !cancelSeen, (try? await store.messageState(id: id)) == .cancelled {
                    cancelSeen = true
                    noticeCancel()
                }
            }
        }
    }

    /// The message was cancelled: rate-capped sends stop before their next slot, and the machine
    /// ends the chunk.
    private func noticeCancel() {
        cancelFlag.set()
        mailbox.post(.cancelled)
    }

    /// Counts the delivery-log rows a commit wrote.
    private func wrote(_ records: FanOutRecords) {
        if !records.deliveries.isEmpty { fanOut.metrics?.deliveryLogRows("written", records.deliveries.count) }
    }

    /// Records a page: its counts, cursor and holds (recipients whose provider could not take it),
    /// with its delivery-log rows and webhook events (and `pending`'s) in the same transaction;
    /// answers how many recipients the chunk holds now.
    private func commit(cursor: String, counts: FanOutCounts, releasing: [String], records pending: FanOutRecords)
        async throws(StoreError) -> Int64
    {
        let message = chunk.message
        let store = fanOut.store
        var records = pending
        // The endpoints are disabled in the commit itself: a crash or a lost lease between the two
        // would leave them disabled with nobody told (the next holder skips disabled endpoints).
        records.disable += counts.disable.map { FanOutRecords.Disable(endpointID: $0.id, reason: $0.reason) }
        records.deliveries += counts.records.deliveries
        records.events += counts.records.events
        for endpoint in counts.disable {
            records.events += fanOut.events.endpointDisabled(
                app: endpoint.app, endpointID: endpoint.id, token: endpoint.token, reason: endpoint.reason,
                messageID: message.id, inCommit: true)
        }
        for endpoint in counts.retoken {
            await adoptCanonicalToken(endpoint, messageID: message.id, into: &records)
        }
        let held = try await store.recordChunkProgress(
            chunk, policy: fanOut.policy, cursor: cursor, counts: counts.progress, state: .fanningOut,
            holds: FanOutHoldChanges(
                holding: counts.hold.map { FanOutHold(endpointID: $0.id, reason: $0.reason) }, releasing: releasing),
            records: records, now: unixMilliseconds())
        wrote(records)
        for held in counts.hold { fanOut.metrics?.fanOutHolds(app: held.app, event: "held").increment() }
        return held
    }

    /// The provider answered a delivery with the device's new token (an ADM canonical registration
    /// id): the endpoint takes it, so the next publish goes to the new one. When another endpoint of
    /// the app already holds that token, it covers the device and this one is disabled, in the
    /// page's commit (`records`).
    private func adoptCanonicalToken(
        _ endpoint: (id: String, token: String, app: String), messageID: String, into records: inout FanOutRecords
    ) async {
        let store = fanOut.store
        do {
            _ = try await store.updateEndpoint(
                id: endpoint.id, normalizedToken: endpoint.token, enabled: nil, customUserData: nil)
            fanOut.log.info(
                "endpoint token replaced by the provider's canonical one",
                ["app": endpoint.app, "endpoint_id": endpoint.id, "message_id": messageID])
        } catch  where error.code == .alreadyExists {
            let reason = "CanonicalTokenOfEndpoint:\(error.existingID ?? "")"
            records.disable.append(FanOutRecords.Disable(endpointID: endpoint.id, reason: reason))
            records.events += fanOut.events.endpointDisabled(
                app: endpoint.app, endpointID: endpoint.id, token: endpoint.token, reason: reason, messageID: messageID,
                inCommit: true)
        } catch {
            fanOut.log.warning("could not store a canonical token", ["endpoint_id": endpoint.id, "error": "\(error)"])
        }
    }

    /// A held recipient FAILED past the hold limit: its event, log row and metrics.
    private func report(givenUp recipient: Machine.GivenUp, into records: inout FanOutRecords) {
        let app = recipient.endpoint.app
        let now = unixMilliseconds()
        records.events += fanOut.events.result(
            recipient.result, app: app, messageID: chunk.message.id, endpointID: recipient.endpoint.id, inCommit: true)
        if fanOut.deliveryLog.enabled {
            records.deliveries.append(
                DeliveryLogRecord(
                    recipient.result, endpoint: recipient.endpoint, messageID: chunk.message.id, time: now))
        }
        fanOut.metrics?.notifications(app: app)?.record(CollectionOfOne(recipient.result))
        fanOut.metrics?.fanOutHolds(app: app, event: "given_up").increment()
    }

    private func write(_ line: Machine.LogLine) {
        switch line.level {
        case .info: fanOut.log.info(line.message, line.fields)
        case .warning: fanOut.log.warning(line.message, line.fields)
        case .error: fanOut.log.error(line.message, line.fields)
        }
    }
}

/// Events for one chunk's driver, from any task, in the order posted. Unaffected by cancellation
/// (the driver decides when to stop listening); bounded by what posts to it: the sends in flight,
/// one lease timer, one renewal and the stop.
final class FanOutMailbox<Event: Sendable>: Sendable {
    private struct State {
        var events: [Event] = []
        var waiter: CheckedContinuation<Event, Never>?
    }

    private let state = Locked(State())

    func post(_ event: Event) {
        let waiter = state.withLock { state -> CheckedContinuation<Event, Never>? in
            guard let waiter = state.waiter else {
                state.events.append(event)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: event)
    }

    /// The next event, waiting for one; one caller at a time.
    func next() async -> Event {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Event? in
                guard !state.events.isEmpty else {
                    state.waiter = continuation
                    return nil
                }
                return state.events.removeFirst()
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
