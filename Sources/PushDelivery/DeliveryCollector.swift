public import PushCore
public import PushPosix
import PushSync

/// Gathers the results of one Send (one per token, in request order) from whichever loops deliver
/// them, and hands them over once all are in, or at the deadline with the rest FAILED.
///
/// What a Send does with its results is a subclass's (``resultFinal(_:)``, ``resultsDone(_:)``):
/// a gateway Send's events, counters and response are one object with its collector, not a
/// second object (or closure context) made and freed per Send.
///
/// Thread-safe: results arrive from the loops of the app's connections. A collector made on an
/// event loop starts without a lock: while the Send stays on that loop (a small Send goes to the
/// app's connection on the caller's loop, and its timer and cancellation run there too) nothing
/// else touches it, and its mutex, three lock round trips and an allocation a Send, would guard
/// nothing. Before any of it goes to another thread, the sender calls
/// ``shareAcrossThreads()`` on the loop, which makes the mutex: that hand-off (an event loop's
/// task queue) orders the mutex's making before the other thread's first look. Made off a loop
/// (a task's `sendAndWait`), it locks from the start.
///
/// `@unchecked` because its state is a stored property read and written only on its loop, or with
/// ``mutex`` held once it exists: a collector is made and dropped per Send, and a ``Locked`` state
/// was an object of its own, made and destroyed (through its generic type's metadata) each time.
open class DeliveryCollector: DeadlineWaiter, @unchecked Sendable {
    private struct State {
        var results: [DeliveryResult]
        /// Which slots have their final result: bits for the first 64 (a small Send needs no
        /// array for it), the array for the rest.
        var filledBits: UInt64 = 0
        var filledRest: [Bool]
        var remaining: Int
        var finished = false
        var waiter: Waiter = .none
        /// The deadline's timer, cancelled by whoever finishes the Send.
        var timer: DeadlineTimer?

        func isFilled(_ slot: Int) -> Bool {
            slot < 64 ? filledBits & (1 << UInt64(slot)) != 0 : filledRest[slot - 64]
        }

        mutating func fill(_ slot: Int) {
            if slot < 64 { filledBits |= 1 << UInt64(slot) } else { filledRest[slot - 64] = true }
        }

        /// Marks the Send finished; the waiter and timer to call and cancel outside the lock.
        mutating func finish() -> (Waiter, DeadlineTimer?) {
            finished = true
            defer {
                waiter = .none
                timer = nil
            }
            return (waiter, timer)
        }
    }

    /// Who gets the results once all are in.
    private enum Waiter {
        case none
        /// ``resultsDone(_:)``.
        case subclass
        case closure(@Sendable ([DeliveryResult]) -> Void)

        var isSet: Bool {
            if case .none = self { return false }
            return true
        }
    }

    /// The loop the collector was made on, nil off a loop. Not retained: a group's loops outlive
    /// every Send they carry (a retain and a release each per Send, for nothing). Unmanaged, so
    /// that calling it retains nothing either (an `unowned(unsafe)` reference was retained around
    /// each call).
    private let homeLoop: Unmanaged<EventLoop>?
    private var home: EventLoop? { homeLoop?.takeUnretainedValue() }
    /// Made by ``shareAcrossThreads()`` (or at once off a loop); written only on `home`, before
    /// any other thread can see it, and never again. Without it, the state is `home`'s alone.
    private var mutex: PThreadMutex?
    private var state: State
    private let onResult: (@Sendable (DeliveryResult) -> Void)?
    /// When set and flipped, the requests not yet sent are dropped (see ``DeliveryCancellation``).
    public let cancellation: DeliveryCancellation?

    /// - Parameters:
    ///   - placeholders: one result per slot, in order (token and notification index set; they
    ///     become FAILED `DeadlineExceeded` when the deadline passes first).
    ///   - onResult: told of every final result as it happens (metrics, events); keep it cheap.
    ///   - cancellation: takes back the requests not yet sent once flipped.
    public init(
        placeholders: [DeliveryResult], onResult: (@Sendable (DeliveryResult) -> Void)? = nil,
        cancellation: DeliveryCancellation? = nil
    ) {
        self.cancellation = cancellation
        state = State(
            results: placeholders, filledRest: Array(repeating: false, count: max(0, placeholders.count - 64)),
            remaining: placeholders.count)
        self.onResult = onResult
        homeLoop = EventLoop.current.map { Unmanaged.passUnretained($0) }
        super.init()
        if homeLoop == nil { mutex = PThreadMutex() }
    }

    /// Called on the collector's loop before any of its Send goes to another thread (a request
    /// to a connection on another loop): from then on every access takes the mutex.
    public func shareAcrossThreads() {
        guard mutex == nil else { return }
        precondition(home?.inEventLoop == true, "a collector is shared from the loop it was made on")
        // Its deadline would be cancelled from another thread: a shared one waits with a timer.
        precondition(!waitsForDeadline, "a collector is shared before it waits for its deadline")
        mutex = PThreadMutex()
    }

    /// Whether the state is guarded by a mutex (shared, or made off a loop). For tests.
    var isShared: Bool { mutex != nil }

    /// Told of every final result as it happens (metrics, events), on the thread that gives it;
    /// keep it cheap. Calls `onResult`.
    open func resultFinal(_ result: DeliveryResult) {
        onResult?(result)
    }

    /// Every result, once, when the Send is over, if it waits with ``whenDone(deadline:)``; on the
    /// thread that gives the last result (or expires the Send). Nothing here.
    open func resultsDone(_ results: [DeliveryResult]) {}

    deinit { mutex?.destroy() }

    /// Runs `body` on the state, with the mutex held once there is one.
    private func withLock<Result>(_ body: (inout State) -> Result) -> Result {
        if let mutex { return mutex.withLock { body(&state) } }
        assert(home?.inEventLoop == true, "an unshared collector is used on the loop it was made on")
        return body(&state)
    }

    /// True once the Send was answered: requests not yet sent should be dropped.
    public var isFinished: Bool { withLock { $0.finished } }

    /// True once the sender took back what is not yet sent (``cancellation``).
    public var isCancelled: Bool { cancellation?.isCancelled ?? false }

    /// Records the final result of `slot`. Later results for a finished Send are ignored.
    func complete(slot: Int, with result: consuming DeliveryResult) {
        if mutex == nil {
            completeUnshared(slot: slot, with: consume result)
            return
        }
        let (counted, waiter, timer, results) = withLock {
            state -> (Bool, Waiter, DeadlineTimer?, [DeliveryResult]) in
            guard !state.finished, !state.isFilled(slot) else { return (false, .none, nil, []) }
            state.fill(slot)
            state.results[slot] = result
            state.remaining -= 1
            guard state.remaining == 0, state.waiter.isSet else { return (true, .none, nil, []) }
            let (waiter, timer) = state.finish()
            return (true, waiter, timer, state.results)
        }
        guard counted else { return }
        resultFinal(result)
        // The last result: the Send is over (a waiter is set only then).
        if waiter.isSet { stopDeadline(timer) }
        hand(results, to: waiter)
    }

    /// The same without a lock, on the collector's loop: the result is told first and then
    /// moved into its slot, where the locked path copies it in (the lock's closure captures it)
    /// and its caller destroys the original.
    private func completeUnshared(slot: Int, with result: consuming DeliveryResult) {
        assert(home?.inEventLoop == true, "an unshared collector is used on the loop it was made on")
        guard !state.finished, !state.isFilled(slot) else { return }
        state.fill(slot)
        resultFinal(result)
        state.results[slot] = consume result
        state.remaining -= 1
        guard state.remaining == 0, state.waiter.isSet else { return }
        // The last result: the Send is over (a waiter is set only then).
        let (waiter, timer) = state.finish()
        stopDeadline(timer)
        hand(state.results, to: waiter)
    }

    private func hand(_ results: [DeliveryResult], to waiter: Waiter) {
        switch waiter {
        case .none: break
        case .subclass: resultsDone(results)
        case .closure(let done): done(results)
        }
    }

    /// Waits for every result, or until `deadline` (then the missing ones are FAILED with reason
    /// `DeadlineExceeded`).
    public func results(deadline: ContinuousClock.Instant?) async -> [DeliveryResult] {
        await withCheckedContinuation { continuation in
            whenDone(deadline: deadline) { continuation.resume(returning: $0) }
        }
    }

    /// Calls `done` once with every result, or at `deadline` (then the missing ones are FAILED
    /// with reason `DeadlineExceeded`); at once if the Send is already over. Call it once.
    /// `done` runs on whichever thread gives the last result (or expires the Send).
    public func whenDone(deadline: ContinuousClock.Instant?, _ done: @escaping @Sendable ([DeliveryResult]) -> Void) {
        wait(.closure(done), deadline: deadline.map(MonotonicDeadline.nanoseconds(of:)))
    }

    /// Calls ``resultsDone(_:)`` once with every result, as ``whenDone(deadline:_:)`` calls its
    /// closure, the deadline in ``EventLoop/monotonicNow``'s nanoseconds (``MonotonicDeadline``).
    /// Call it once.
    public func whenDone(deadlineNanoseconds deadline: UInt64?) {
        wait(.subclass, deadline: deadline)
    }

    private func wait(_ waiter: Waiter, deadline: UInt64?) {
        if mutex == nil, let home = homeLoop {
            // Unshared: this thread is its loop, and the deadline waits in the loop's lanes (no timer).
            if state.finished || state.remaining == 0 {
                state.finished = true
                hand(state.results, to: waiter)
                return
            }
            state.waiter = waiter
            if let deadline { home._withUnsafeGuaranteedRef { $0.startDeadline(self, at: deadline) } }
            return
        }
        // Armed before the lock, so that waiter and timer go in under one lock: a Send is nearly
        // always still under way here. One that is over (or expired meanwhile) cancels it below.
        let timer = deadline.map { deadline in
            DeadlineTimer.start(at: deadline, on: EventLoop.current) { [self] in expire() }
        }
        let ready: [DeliveryResult]? = withLock { state in
            if state.finished || state.remaining == 0 {
                state.finished = true
                return state.results
            }
            state.waiter = waiter
            state.timer = timer
            return nil
        }
        guard let ready else { return }
        timer?.cancel()
        hand(ready, to: waiter)
    }

    /// Ends the Send now: missing results become FAILED `DeadlineExceeded`. Any thread: an
    /// unshared collector is expired on its loop.
    public func expire() {
        if mutex == nil, let home, !home.inEventLoop {
            home.execute { self.expire() }
            return
        }
        let (waiter, timer, results, expired) = withLock {
            state -> (Waiter, DeadlineTimer?, [DeliveryResult], [DeliveryResult]) in
            guard !state.finished else { return (.none, nil, [], []) }
            var expired: [DeliveryResult] = []
            for slot in state.results.indices where !state.isFilled(slot) {
                state.results[slot].status = .failed
                state.results[slot].code = .deadlineExceeded
                state.results[slot].reason = "DeadlineExceeded"
                expired.append(state.results[slot])
            }
            let (waiter, timer) = state.finish()
            return (waiter, timer, state.results, expired)
        }
        // These are final results too (events, logs).
        for result in expired { resultFinal(result) }
        stopDeadline(timer)
        hand(results, to: waiter)
    }

    /// The deadline passed (an unshared collector's, in its loop's lanes).
    override public final func deadlinePassed() { expire() }

    /// Stops the finished Send's deadline: its timer (`timer`, shared or made off a loop), or its
    /// place in its loop's lanes (unshared: on that loop).
    private func stopDeadline(_ timer: DeadlineTimer?) {
        timer?.cancel()
        if mutex == nil, waitsForDeadline { homeLoop?._withUnsafeGuaranteedRef { $0.cancelDeadline(self) } }
    }
}

/// Calls `fire` at a deadline unless cancelled first. On an event loop's thread (a gRPC handler
/// runs on its connection's loop) it is one of the loop's timers: no other thread is woken to
/// start it or to cancel it, which on an idle machine is a scheduler wake-up (hundreds of
/// microseconds on a VM) per Send. Elsewhere it is a task that sleeps.
enum DeadlineTimer: Sendable {
    case loop(EventLoop, TimerID)
    case task(Task<Void, Never>)

    /// `deadline` in ``EventLoop/monotonicNow``'s nanoseconds, the clock of a loop's timers;
    /// `loop`: this thread's loop (``EventLoop/current``), nil off a loop.
    static func start(
        at deadline: UInt64, on loop: EventLoop?, _ fire: @escaping @Sendable () -> Void
    ) -> DeadlineTimer {
        if let loop {
            return .loop(loop, loop.schedule(at: deadline, fire))
        }
        return .task(
            Task {
                let now = EventLoop.monotonicNow
                if deadline > now { try? await Task.sleep(nanoseconds: deadline - now) }
                if !Task.isCancelled { fire() }
            })
    }

    func cancel() {
        switch self {
        case .loop(let loop, let id):
            if loop.inEventLoop {
                loop.cancelTimer(id)
            } else {
                loop.execute { loop.cancelTimer(id) }
            }
        case .task(let task):
            task.cancel()
        }
    }
}
