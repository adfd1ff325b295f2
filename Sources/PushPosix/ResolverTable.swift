/// What a ``HostResolver`` knows, as a plain value: the answers it keeps (for a bounded time, a
/// bounded number of names), the names being looked up and who waits for each, and the names
/// waiting for a free lookup thread. Events go in with the time; what to do comes out. No threads,
/// no clock: the tests drive it directly.
struct ResolverTable<Waiter> {
    /// How long an answer is reused, in nanoseconds.
    let cacheNanoseconds: UInt64
    /// Answers kept at once; past it the oldest goes.
    let maxEntries: Int
    /// Lookups running at once.
    let maxRunning: Int

    private var answers: [String: Answer] = [:]
    /// Per name being looked up (running or queued), who waits for it: one query per name.
    private var pending: [String: [Waiter]] = [:]
    /// Names waiting for a lookup thread, in order.
    private var queued: [String] = []
    private var queueHead = 0
    private(set) var running = 0

    private struct Answer {
        var addresses: [SocketAddress]
        var expiresAt: UInt64
    }

    init(cacheNanoseconds: UInt64, maxEntries: Int, maxRunning: Int) {
        self.cacheNanoseconds = cacheNanoseconds
        self.maxEntries = max(maxEntries, 0)
        self.maxRunning = max(maxRunning, 1)
    }

    enum Decision {
        /// A fresh answer kept: use it now.
        case answered([SocketAddress])
        /// Someone already asked: the waiter is told with them.
        case joined
        /// Start a lookup thread for the name.
        case startLookup
        /// Every lookup thread is busy: the name waits its turn.
        case queued
    }

    var cachedCount: Int { answers.count }
    var pendingCount: Int { pending.count }

    /// `waiter` wants the addresses of `name` (lower-cased by the caller).
    mutating func lookUp(_ name: String, for waiter: Waiter, now: UInt64) -> Decision {
        if let answer = answers[name] {
            if answer.expiresAt > now { return .answered(answer.addresses) }
            answers[name] = nil
        }
        if pending[name] != nil {
            pending[name]!.append(waiter)
            return .joined
        }
        pending[name] = [waiter]
        guard running < maxRunning else {
            queued.append(name)
            return .queued
        }
        running += 1
        return .startLookup
    }

    /// The lookup of `name` ended: who waited for it, and the next queued name the same thread
    /// looks up (nil: the thread ends). Failures are not kept: the next connection asks again.
    mutating func finished(
        _ name: String, _ result: Result<[SocketAddress], IOError>, now: UInt64
    ) -> (waiters: [Waiter], next: String?) {
        let waiters = pending.removeValue(forKey: name) ?? []
        if case .success(let addresses) = result, maxEntries > 0 {
            answers[name] = Answer(addresses: addresses, expiresAt: now &+ cacheNanoseconds)
            evict(now: now)
        }
        return (waiters, takeQueued())
    }

    /// A lookup thread could not be started for `name`: its waiters, to be told of the failure, and
    /// the next queued name to start a thread for in its place (nil: the slot is free again).
    mutating func notStarted(_ name: String) -> (waiters: [Waiter], next: String?) {
        (pending.removeValue(forKey: name) ?? [], takeQueued())
    }

    private mutating func takeQueued() -> String? {
        guard queueHead < queued.count else {
            running -= 1
            return nil
        }
        let name = queued[queueHead]
        queueHead += 1
        if queueHead == queued.count {
            queued.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        return name
    }

    /// Expired answers go; then, while over the limit, the one that expires first (the oldest: every
    /// answer is kept equally long). Runs once per lookup, never per connection.
    private mutating func evict(now: UInt64) {
        guard answers.count > maxEntries else { return }
        answers = answers.filter { $0.value.expiresAt > now }
        while answers.count > maxEntries, let oldest = answers.min(by: { $0.value.expiresAt < $1.value.expiresAt }) {
            answers[oldest.key] = nil
        }
    }
}
