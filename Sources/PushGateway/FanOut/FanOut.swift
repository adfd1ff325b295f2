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
    /// Subscriptions read, sent and committed together (``defaultPageSize``, or the queue limit if smaller).
    let pageSize: Int
    let settings: FanOutSettings
    /// This process's claims; a new owner id every start.
    let policy: FanOutLeasePolicy
    let store: any Store
    let live: LiveSettings
    let log: Log
    let events: DeliveryEvents
    let metrics: GatewayMetrics?
    /// Which outcomes the delivery log keeps (`delivery_log`).
    let deliveryLog: DeliveryLogSettings

    private struct State {
        var workers: [Int: Task<Void, Never>] = [:]
        var nextWorker = 0
        /// Set by `kick`: work may have appeared since a worker last found none.
        var pending = false
        var stopped = false
        var chunksInProgress = 0
        var poller: Task<Void, Never>?
        /// Chunk runs by message id, told at once when their message is cancelled here.
        var runs: [String: [Int: @Sendable () -> Void]] = [:]
        var nextRun = 0
        /// Start times of messages scheduled through this instance, soonest first (at most
        /// ``maxWakes``; the poll finds the rest, and those published elsewhere).
        var wakes: [Int64] = []
        var waker: Task<Void, Never>?
        /// Chunks of rate-capped messages, by message id (one per message), run beside the workers:
        /// they mostly wait for their slots, and must not keep the workers from other messages.
        var paced: [String: Task<Void, Never>] = [:]
    }
    private let state = Locked(State())

    init(
        store: any Store, live: LiveSettings, events: DeliveryEvents, log: Log,
        metrics: GatewayMetrics? = nil, pageSize: Int = FanOut.defaultPageSize,
        settings: FanOutSettings = FanOutSettings(),
        deliveryLog: DeliveryLogSettings = DeliveryLogSettings(), owner: String = "pushgate-" + RandomUUID.make()
    ) {
        self.deliveryLog = deliveryLog
        self.store = store
        self.events = events
        self.live = live
        self.log = log
        self.metrics = metrics
        self.pageSize = pageSize
        self.settings = settings
        policy = FanOutLeasePolicy(
            owner: owner, leaseMillis: Int64(settings.leaseSeconds) * 1000,
            chunkSize: settings.chunkSize)
    }

    /// A message was committed here: start on it now (or at its `deliverAt`) rather than at the
    /// next poll.
    func published(deliverAt: Int64 = 0) {
        guard deliverAt > 0 else { return kick() }
        state.withLock { state in
            guard !state.stopped else { return }
            let index = state.wakes.partitioningIndex { $0 > deliverAt }
            guard index < Self.maxWakes else { return }
            state.wakes.insert(deliverAt, at: index)
            if state.wakes.count > Self.maxWakes { state.wakes.removeLast() }
            if index == 0 {
                state.waker?.cancel()
                state.waker = Task { [weak self] in await self?.wakeForSchedules() }
            }
        }
    }

    /// How many start times are remembered for a timely kick.
    static let maxWakes = 1024

    /// Sleeps until the soonest remembered start time, kicks, and goes on to the next.
    private func wakeForSchedules() async {
        while !Task.isCancelled {
            let now = unixMilliseconds()
            let next = state.withLock { state -> Int64? in
                let due = state.wakes.partitioningIndex { $0 > now }
                state.wakes.removeFirst(due)
                return state.wakes.first
            }
            kick()
            guard let next else { return }
            try? await Task.sleep(for: .milliseconds(max(0, next - now)))
        }
    }

    /// A message was cancelled through this instance: its chunks worked here stop now; other
    /// instances' notice within ``cancelPollMilliseconds``.
    func cancelled(messageID: String) {
        let hooks = state.withLock { Array(($0.runs[messageID] ?? [:]).values) }
        for hook in hooks { hook() }
    }

    /// How often a chunk being worked asks the store whether its message was cancelled elsewhere.
    static let cancelPollMilliseconds = 400

    /// Registers a chunk run's cancel hook for its message; answers the key to forget it with.
    func register(messageID: String, onCancel: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            let key = state.nextRun
            state.nextRun += 1
            state.runs[messageID, default: [:]][key] = onCancel
            return key
        }
    }

    func forget(messageID: String, key: Int) {
        state.withLock { state in
            state.runs[messageID]?[key] = nil
            if state.runs[messageID]?.isEmpty == true { state.runs[messageID] = nil }
        }
    }

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
            state.waker?.cancel()
            for task in state.workers.values { task.cancel() }
            for task in state.paced.values { task.cancel() }
        }
    }

    /// After ``stop()`` and the delivery engine's shutdown: waits (briefly) for the workers to end,
    /// then releases this instance's leases so other instances resume its chunks at once.
    func drain() async {
        // The workers' ends, or 5 s, whichever comes first: no polling. Waiting on a worker's value
        // and giving up on it leaves the worker itself running (it was stopped already).
        let workers = state.withLock { Array($0.workers.values) + Array($0.paced.values) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for worker in workers { await worker.value } }
            group.addTask { try? await Task.sleep(for: .seconds(5)) }
            await group.next()
            group.cancelAll()
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
                // A kick while this worker finished (its last claim found nothing, or it waited for
                // a chunk's tail) found it still counted and started no other: it works again. The
                // check and the removal are one locked step, so no kick falls between them.
                repeat {
                    await work()
                } while self.state.withLock { state in
                    guard !state.pending || state.stopped else { return true }
                    state.workers.removeValue(forKey: id)
                    return false
                }
            }
        }
    }

    /// Claims and works chunks until there are none (or the store fails: the poller retries). A
    /// rate-capped message's chunk is handed to a task of its own (``startPaced(_:)``) and the
    /// worker claims on.
    ///
    /// Once a chunk has read its last page the worker claims the next one while the first sends
    /// and commits its last pages: without the overlap every chunk boundary drained the pages in
    /// flight and paid the claim's round trips with nothing else to do (PostgreSQL's 1M fan-out
    /// ran ~20 % idle). So a worker has at most two chunks at once, one of them in its tail.
    private func work() async {
        // Cancelling the worker (stop) cancels its chunks' tasks too; it ends once they have.
        await withTaskGroup(of: Void.self) { running in
            var runs = 0
            await claimAndWork(into: &running, runs: &runs)
            await running.waitForAll()
        }
    }

    /// Chunks one worker has at once: the one it reads and one finishing its last pages.
    static let chunksPerWorker = 2

    private func claimAndWork(into running: inout TaskGroup<Void>, runs: inout Int) async {
        while !Task.isCancelled {
            // A slot first, then the claim: a chunk claimed before it could start would wait with
            // its lease unrenewed (its timer starts with its run) for as long as a tail takes.
            while runs >= Self.chunksPerWorker, await running.next() != nil { runs -= 1 }
            if Task.isCancelled { return }
            let filter = state.withLock { state in
                state.pending = false
                return FanOutClaimFilter(
                    skippingMessages: Array(state.paced.keys), paced: state.paced.count < Self.maxPacedChunks)
            }
            let chunk: FanOutChunk?
            do {
                chunk = try await store.claimFanOutChunk(policy, filter: filter, now: unixMilliseconds())
            } catch {
                log.error("cannot claim fan-out work", ["error": "\(error)"])
                return
            }
            guard let chunk else {
                // A kick since the claim began may have missed this worker: claim again.
                if state.withLock({ $0.pending && !$0.stopped }) { continue }
                return
            }
            if chunk.message.maxPerSecond > 0 {
                startPaced(chunk)
                continue
            }
            // Posted when the chunk has read its last page, and when it ends (whichever is first
            // lets the worker claim on).
            let reading = FanOutMailbox<Void>()
            state.withLock { $0.chunksInProgress += 1 }
            runs += 1
            running.addTask { [self] in
                await run(chunk) { reading.post(()) }
                state.withLock { $0.chunksInProgress -= 1 }
                reading.post(())
            }
            await reading.next()
        }
    }

    /// Rate-capped chunks worked at once by this instance, beside the workers (each waits for its
    /// slots most of the time; its memory is its pages in flight).
    static let maxPacedChunks = 64

    /// Works a rate-capped message's chunk in a task of its own; when it ends, the workers look for
    /// more (the message's next chunk, say).
    private func startPaced(_ chunk: FanOutChunk) {
        let id = chunk.message.id
        state.withLock { state in
            // Stopping: the chunk's lease is released by the drain (or runs out).
            guard !state.stopped else { return }
            state.chunksInProgress += 1
            // Under the lock, so the task's own removal cannot come before this insertion.
            state.paced[id] = Task { [self] in
                await run(chunk)
                self.state.withLock { state in
                    state.paced[id] = nil
                    state.chunksInProgress -= 1
                }
                kick()
            }
        }
    }

    /// Pages sent at once: while one page waits for the provider, the next is read and sent. Pages
    /// are committed in order, so the resume cursor only moves past pages that are done; the
    /// duplicate window after a crash is these pages, per chunk being worked.
    static let pagesInFlight = 3

    /// A page: 5,000, the default chunk, so a default chunk is one page. Every page costs a store
    /// read, a commit (with its fsync) and a round of task and thread wake-ups, ~0.6 ms of the
    /// gateway's CPU, whatever its size: pages of 1,000 spent ~11 % of a 1M fan-out's gateway CPU
    /// on that (12-17 % slower in an A/B on a busy machine, a few % in `make bench`; see
    /// scripts/bench/analysis.md). The crash window does
    /// not grow past a chunk: what a dead instance may send twice is the uncommitted pages of the
    /// chunks it was working, at most `min(chunk_size, pagesInFlight × pageSize)` each.
    static let defaultPageSize = 5000

    /// A rate-capped message's page. Its pages wait for their slots (a page's overhead is nothing
    /// next to that wait) and up to ``maxPacedChunks`` of them run at once: kept small, their pages
    /// hold ~64 × 3,000 recipients rather than ~64 × 5,000.
    static let pacedPageSize = 1000
}

extension Array where Element: Comparable {
    /// The index of the first element for which `belongsAfter` holds, in a sorted array where it
    /// holds for a suffix (binary search).
    func partitioningIndex(where belongsAfter: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongsAfter(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
