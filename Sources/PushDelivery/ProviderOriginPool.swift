import PushCore
import PushPosix
import PushTransport
import Synchronization

/// One origin's connections of an app: the app's own provider host, or another host its tokens
/// name (a Web Push subscription names its push service). Made on first use; an app's pools other
/// than its own are bounded in number and closed when idle (``ProviderClient``).
final class ProviderOriginPool<Dialect: ProviderDialect>: Sendable {
    let usage: ProviderOriginUsage
    private let app: ProviderAppContext<Dialect>
    /// The pool's connections, each made on first need (it connects on its first request). A small
    /// send made on a loop that has none of them yet makes the next one on that loop: its requests
    /// and answers then never leave the thread that waits for them (no hop, no wake-up of another
    /// thread either way). Sends that need them all make the rest on the loops in turn.
    private let connections: [ProviderConnectionSlot]
    private let loops: [EventLoop]
    private let nextLoop: Atomic<Int>
    private let nextConnection = Atomic<Int>(0)

    init(origin: HTTPSOrigin, app: ProviderAppContext<Dialect>, connections count: Int, loops: [EventLoop]) {
        usage = ProviderOriginUsage(origin: origin, app: app.usage)
        self.app = app
        connections = (0..<max(1, count)).map { _ in ProviderConnectionSlot() }
        self.loops = loops
        // Pools made for large sends start on different loops.
        nextLoop = Atomic(Int.random(in: 0..<loops.count))
    }

    var origin: HTTPSOrigin { usage.origin }

    /// The loops of the connections made so far, in slot order (for tests).
    var connectionLoops: [EventLoop] { madeConnections.map(\.loop) }

    /// Connections made so far.
    private var madeConnections: [ProviderConnection<Dialect>] {
        connections.compactMap { $0.load(Dialect.self) }
    }

    /// Connection `index`, made on `loop` (or the next loop in turn) if it is not made yet.
    private func connection(_ index: Int, on loop: EventLoop? = nil) -> ProviderConnection<Dialect> {
        if let made = connections[index].load(Dialect.self) { return made }
        let chosen = loop ?? loops[nextLoop.add(1, ordering: .relaxed).oldValue % loops.count]
        return connections[index].storeIfNil(ProviderConnection(loop: chosen, app: app, usage: usage))
    }

    /// A connection on the calling thread's loop: one made there, or the next one not made yet,
    /// made there. Nil when the caller is on no loop of this client or every connection is elsewhere.
    private func localConnection() -> ProviderConnection<Dialect>? {
        guard let loop = EventLoop.current, loops.contains(where: { $0 === loop }) else { return nil }
        for slot in connections.indices {
            guard let made = connections[slot].load(Dialect.self) else {
                let candidate = connection(slot, on: loop)
                // Another thread may have made it first, on its own loop: look further.
                if candidate.loop === loop { return candidate }
                continue
            }
            if made.loop === loop { return made }
        }
        return nil
    }

    /// Hands `count` requests (`request(i)` for i in 0..<count) to the connections; the pool's
    /// usage must already count them.
    func send(count: Int, _ request: (Int) -> ProviderRequest) {
        if let reason = usage.refusalRejection() {
            // The provider refuses our certificate and the backoff runs: no connection would do
            // better (issue #46).
            for index in 0..<count {
                let refused = request(index)
                usage.release(1)
                refused.job.collector.complete(
                    slot: refused.slot, with: refused.result(.failed, .unreachable, reason: reason))
            }
            return
        }
        // A small send from a loop that has one of the pool's connections stays on that loop: no
        // thread hop on the way out, and the answer comes back to the same thread (the gRPC
        // handlers run on their connection's loop).
        if count <= Self.localSendLimit, let local = localConnection() {
            // One request (a 1-token Send) goes without an array around it.
            if count == 1 { local.enqueue(request(0)) } else { local.enqueue((0..<count).map(request)) }
            return
        }
        // Split the requests in contiguous chunks, one hop per connection (not per token).
        let chunk = (count + connections.count - 1) / connections.count
        let start = nextConnection.add(1, ordering: .relaxed).oldValue
        var index = 0
        var turn = 0
        while index < count {
            let end = min(index + chunk, count)
            let requests = (index..<end).map(request)
            let connection = connection((start + turn) % connections.count)
            // Shared before the hop: its collector is touched from that loop on.
            requests.first?.job.collector.shareAcrossThreads()
            connection.loop.execute { connection.enqueue(requests) }
            index = end
            turn += 1
        }
    }

    /// Sends of at most this many tokens go to a connection on the caller's loop when there is one.
    static var localSendLimit: Int { 64 }

    /// Fails what is queued and closes the connections; every slot gets a connection now, shut
    /// down, so that nothing sent later is left waiting (it fails at once).
    func shutdown() {
        for slot in connections.indices {
            let connection = connection(slot)
            connection.loop.execute { connection.shutdown() }
        }
    }

    /// Closes the connections made (an idle pool being dropped: nothing is queued or in flight).
    func close() {
        for connection in madeConnections {
            connection.loop.execute { connection.shutdown() }
        }
    }

    var openConnections: Int {
        madeConnections.reduce(0) { $0 + ($1.isOpen.load(ordering: .relaxed) ? 1 : 0) }
    }

    var streamsInFlight: Int {
        madeConnections.reduce(0) { $0 + $1.streamsInFlight.load(ordering: .relaxed) }
    }

    func peakStreamsInFlight() async -> Int {
        var peak = 0
        for connection in madeConnections {
            peak = max(
                peak,
                await withCheckedContinuation { continuation in
                    connection.loop.execute { continuation.resume(returning: connection.peakInFlight) }
                })
        }
        return peak
    }
}

/// What one origin's connections share with their pool: where they connect, and how many requests
/// the pool holds (so that an idle pool is known without asking its connections). Not generic, so
/// a connection reaches it without run-time metadata lookups.
final class ProviderOriginUsage: Sendable {
    let origin: HTTPSOrigin
    private let app: ProviderAppUsage
    private let held = Atomic<Int>(0)
    /// Monotonic nanoseconds of the last time `held` went to 0 (or the pool was made).
    private let idleSince: Atomic<UInt64>
    /// The origin's refusals (issue #46), shared by its connections.
    private let refusalGate = Mutex(OriginRefusalGate())
    /// The gate's `closedUntil`, readable without the lock: 0 while it is open, so a send pays one
    /// relaxed load for it.
    private let refusedUntil = Atomic<UInt64>(0)

    init(origin: HTTPSOrigin, app: ProviderAppUsage) {
        self.origin = origin
        self.app = app
        idleSince = Atomic(EventLoop.monotonicNow)
    }

    /// A connection of this origin was refused at `now` (monotonic): whether to log it, and the
    /// refusals that line stands for (``OriginRefusalGate``).
    func refused(
        _ refusal: ConnectionRefusal, at now: UInt64, policy: RetryPolicy, logInterval: Duration
    ) -> (log: Bool, attempts: Int) {
        let unit = Double.random(in: 0..<1)
        return refusalGate.withLock { gate in
            let verdict = gate.refused(refusal, at: now, policy: policy, logInterval: logInterval, unit: unit)
            // Under the lock: two refusals at once must not leave the earlier deadline published.
            refusedUntil.store(gate.closedUntilNanoseconds, ordering: .relaxed)
            return verdict
        }
    }

    /// The reason to FAIL requests sent now with, while the provider refuses our certificate and
    /// its backoff runs; nil otherwise.
    func refusalRejection() -> String? {
        let until = refusedUntil.load(ordering: .relaxed)
        guard until != 0 else { return nil }
        let now = EventLoop.monotonicNow
        guard now < until else {
            // Open again: later sends skip the clock read (unless a newer refusal closed it).
            _ = refusedUntil.compareExchange(expected: until, desired: 0, ordering: .relaxed)
            return nil
        }
        return refusalGate.withLock { $0.rejection(at: now) }
    }

    /// `count` more requests are on their way to this pool (their room in the app's queue is
    /// already reserved).
    func take(_ count: Int) {
        held.add(count, ordering: .relaxed)
    }

    /// `count` requests of this pool have their results: their room goes back to the app too.
    func release(_ count: Int) {
        app.release(count)
        if held.subtract(count, ordering: .acquiringAndReleasing).newValue == 0 {
            idleSince.store(EventLoop.monotonicNow, ordering: .relaxed)
        }
    }

    /// Since when the pool has held nothing; nil while it holds requests.
    var idleSinceNanoseconds: UInt64? {
        held.load(ordering: .acquiring) == 0 ? idleSince.load(ordering: .relaxed) : nil
    }
}

/// One connection of a ``ProviderOriginPool``, made once.
///
/// Not generic, and not nested in the generic pool (which would make it generic): the client's
/// methods run unspecialized (callers hold an `any DeliveryClient`), and there every use of a slot
/// generic over the dialect looked up the metadata of the slot, the connection type and the slot
/// array at run time on every Send. An `AtomicLazyReference` (the library's
/// one-time reference) was no better: its `load` is not inlinable and looked up `Unmanaged`'s
/// metadata on every call; a plain atomic pointer is a load. The slot
/// only ever holds a `ProviderConnection` of its pool's dialect, retained once for the slot's life.
private final class ProviderConnectionSlot: @unchecked Sendable {
    private let pointer = Atomic<UnsafeMutableRawPointer?>(nil)

    func load<Dialect: ProviderDialect>(_: Dialect.Type) -> ProviderConnection<Dialect>? {
        guard let raw = pointer.load(ordering: .acquiring) else { return nil }
        return unsafeDowncast(
            Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue(), to: ProviderConnection<Dialect>.self)
    }

    /// Stores `connection` unless a connection is there already; returns the one that stays.
    func storeIfNil<Dialect: ProviderDialect>(_ connection: ProviderConnection<Dialect>) -> ProviderConnection<Dialect>
    {
        let raw = Unmanaged<AnyObject>.passRetained(connection).toOpaque()
        let (stored, existing) = pointer.compareExchange(
            expected: nil, desired: raw, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring)
        if stored { return connection }
        Unmanaged<AnyObject>.fromOpaque(raw).release()
        return unsafeDowncast(
            Unmanaged<AnyObject>.fromOpaque(existing!).takeUnretainedValue(), to: ProviderConnection<Dialect>.self)
    }

    deinit {
        if let raw = pointer.load(ordering: .acquiring) { Unmanaged<AnyObject>.fromOpaque(raw).release() }
    }
}
