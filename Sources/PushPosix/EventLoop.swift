import CLinux
import Dispatch
import Glibc
import PushSync
import Synchronization

/// The thread-specific slot holding each loop thread's ``EventLoop`` (see ``EventLoop/current``).
private let currentLoopKey: pthread_key_t = {
    var key = pthread_key_t()
    precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
    return key
}()

/// One thread running epoll. Everything registered with a loop (connections, listeners,
/// timers) is touched only on that thread, so none of it needs locks; the single exception is
/// the task queue other threads use to hand work to the loop (`execute`), guarded by a lock
/// (`Locked`) and paired with an eventfd wake-up.
///
/// A turn: wait for readiness (timeout = nearest timer), dispatch the events, run the queued
/// tasks, run expired timers, then flush every connection that has pending output, once.
///
/// `@unchecked Sendable`: the immutable members, `shared` (Locked) and `threadID` (Atomic) may
/// be used from any thread; every other stored property is confined to the loop's thread.
public final class EventLoop: @unchecked Sendable {
    public let name: String

    // MARK: any thread
    let epoll: Epoll
    private let wakeup: Wakeup
    private let shared = Locked(SharedState())
    /// pthread_t of the loop thread, 0 until it is known. Written by both the spawner and the
    /// thread itself (same value), so the thread can answer `inEventLoop` from its first line.
    private let threadID = Atomic<UInt>(0)
    /// Left when the loop thread has finished; lets shutdown() callers that do not join wait.
    private let finished = DispatchGroup()

    private struct SharedState {
        var tasks: [@Sendable () -> Void] = []
        /// The eventfd was written and the loop has not yet taken the tasks: no need to write it
        /// again, which keeps the wake-up to at most one syscall per turn however many tasks.
        var wakePending = false
        var stopRequested = false
        /// Someone (a joining shutdown() caller, or the thread detaching itself) has taken
        /// responsibility for releasing the pthread.
        var threadClaimed = false
    }

    // MARK: loop thread only
    private var registrations: [UInt64: any Selectable] = [:]
    private var nextRegistrationID: UInt64 = 1
    var timers = TimerQueue()
    /// Waiters for deadlines (``startDeadline(_:at:)``), in order without a timer each.
    var deadlines = DeadlineLanes()
    private var spareTasks: [@Sendable () -> Void] = []
    /// Connections that have output to flush at the end of this turn.
    var flushQueue: [Connection] = []
    private var spareFlushQueue: [Connection] = []
    /// Callbacks that must not run re-entrantly inside another callback (connectionDidClose,
    /// connect completions). They run as soon as the current callback returns.
    var deferred: [() -> Void] = []
    /// Work to run once this turn's events, tasks and timers are done, just before the sockets are
    /// flushed (``executeAtEndOfTurn(_:)``).
    var endOfTurn: [() -> Void] = []
    var spareEndOfTurn: [() -> Void] = []
    /// True while ``runEndOfTurn()`` runs, and once the loop is closing (loop thread only): task
    /// jobs enqueued from the loop then take the task queue (see ``enqueue(_:)``).
    var isRunningEndOfTurn = false
    private var isClosing = false
    var takesJobsAtEndOfTurn: Bool { !isRunningEndOfTurn && !isClosing }
    private let events = EpollEvents(capacity: 256)
    /// The one read buffer every connection of this loop reads into (valid during didReceive).
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 128 * 1024, alignment: 16)
    /// Scratch iovec array for writev-style flushes.
    let iovecs = UnsafeMutableBufferPointer<iovec>.allocate(capacity: 64)
    var signalSource: SignalSource?

    private init(name: String) throws(IOError) {
        self.name = name
        epoll = try Epoll()
        do {
            wakeup = try Wakeup()
            try epoll.add(fd: wakeup.fd, id: 0, events: LinuxCalls.epollIn)
        } catch {
            closeDescriptor(epoll.fd)
            throw error
        }
        registrations[0] = wakeup
    }

    deinit {
        // Only reached once the thread has exited and nobody can call execute() any more
        // (it would need a reference), so the eventfd can no longer be written.
        closeDescriptor(epoll.fd)
        events.deallocate()
        readBuffer.deallocate()
        iovecs.deallocate()
    }

    /// Starts a thread running the loop.
    public static func spawn(name: String) throws -> EventLoop {
        let loop = try EventLoop(name: name)
        loop.finished.enter()
        let thread: pthread_t
        do {
            // The thread owns one strong reference until it exits.
            thread = try startThread(name) { loop.threadMain() }
        } catch {
            loop.finished.leave()
            throw error
        }
        loop.threadID.store(UInt(thread), ordering: .releasing)
        return loop
    }

    /// The loop whose thread this is; nil on any other thread. Lets code that runs inside a loop
    /// (a gRPC handler task prefers its connection's loop) use that loop's timers instead of
    /// involving another thread.
    public static var current: EventLoop? {
        pthread_getspecific(currentLoopKey).map { Unmanaged<EventLoop>.fromOpaque($0).takeUnretainedValue() }
    }

    /// True when called on this loop's thread.
    public var inEventLoop: Bool {
        threadID.load(ordering: .acquiring) == UInt(pthread_self())
    }

    @inline(__always)
    func preconditionInEventLoop(_ function: StaticString = #function) {
        precondition(inEventLoop, "EventLoop \(name): \(function) must be called on the loop thread")
    }

    // MARK: - Tasks

    /// Any thread. Tasks run on the loop in submission order (FIFO), after the turn's I/O
    /// events. Tasks submitted once shutdown() has begun are dropped without running; use
    /// `tryExecute` to find out.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        _ = tryExecute(work)
    }

    /// Like `execute`, but reports whether the task was accepted (false once the loop is
    /// shutting down). An accepted task always runs, even if shutdown follows immediately.
    @discardableResult
    public func tryExecute(_ work: @escaping @Sendable () -> Void) -> Bool {
        shared.withLock { state in
            guard !state.stopRequested else { return false }
            state.tasks.append(work)
            if !state.wakePending {
                state.wakePending = true
                // Under the lock so it cannot race with the loop deciding to stop.
                wakeup.signal()
            }
            return true
        }
    }

    /// Runs the tasks queued so far; returns whether a stop was requested. Taking the tasks
    /// and reading the stop flag share one lock acquisition: the only lock of a turn.
    @discardableResult
    private func runTasks() -> Bool {
        var batch: [@Sendable () -> Void] = []
        swap(&batch, &spareTasks)
        let stop = shared.withLock { state -> Bool in
            swap(&state.tasks, &batch)
            state.wakePending = false
            return state.stopRequested
        }
        // Tasks queued by these tasks wait for the next turn (the eventfd is written again).
        for work in batch {
            work()
            runDeferred()
        }
        batch.removeAll(keepingCapacity: true)
        spareTasks = batch
        return stop
    }

    // MARK: - Registrations (loop thread)

    func register(_ target: any Selectable, fd: Int32, events: UInt32) throws(IOError) -> UInt64 {
        let id = nextRegistrationID
        nextRegistrationID += 1
        try epoll.add(fd: fd, id: id, events: events)
        registrations[id] = target
        return id
    }

    func modify(id: UInt64, fd: Int32, events: UInt32) throws(IOError) {
        try epoll.modify(fd: fd, id: id, events: events)
    }

    /// Hands an existing registration to a new owner (a finished connect becomes a Connection).
    func replace(id: UInt64, with target: any Selectable) {
        registrations[id] = target
    }

    /// Removes from epoll *before* the caller closes the descriptor, and forgets the id so a
    /// stale event from this turn's batch is ignored.
    /// Loop thread only. Keeps `target` in the table with no descriptor, so that a shutdown tells
    /// it (``Selectable/closeForShutdown()``): for work that waits on another thread (a name lookup).
    func registerWaiter(_ target: any Selectable) -> UInt64 {
        let id = nextRegistrationID
        nextRegistrationID += 1
        registrations[id] = target
        return id
    }

    /// Loop thread only. Ends ``registerWaiter(_:)``.
    func deregisterWaiter(id: UInt64) { registrations[id] = nil }

    func deregister(id: UInt64, fd: Int32) {
        registrations[id] = nil
        // Can only fail if the fd is already gone from epoll; closing it next cleans up anyway.
        try? epoll.remove(fd: fd)
    }

    // MARK: - Output batching and deferred callbacks (loop thread)

    func enqueueFlush(_ connection: Connection) {
        flushQueue.append(connection)
    }

    private func flushPending() {
        guard !flushQueue.isEmpty else { return }
        // Swap in the (empty) spare array: no allocation per turn. Output produced by
        // connectionDidDrain lands in the fresh queue and goes out next turn.
        var batch: [Connection] = []
        swap(&batch, &spareFlushQueue)
        swap(&batch, &flushQueue)
        for connection in batch {
            connection.flushNow()
            runDeferred()
        }
        batch.removeAll(keepingCapacity: true)
        spareFlushQueue = batch
    }

    func deferCallback(_ work: @escaping () -> Void) {
        deferred.append(work)
    }

    func runDeferred() {
        while !deferred.isEmpty {
            let batch = deferred
            deferred = []
            for work in batch { work() }
        }
    }

    // MARK: - The thread

    private func threadMain() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        // Unretained: the thread holds a strong reference to the loop until it exits.
        pthread_setspecific(currentLoopKey, Unmanaged.passUnretained(self).toOpaque())
        // Linux limits thread names to 15 bytes; the name only helps debugging (top -H, gdb).
        var shortName = Array(name.utf8.prefix(15)).map { CChar(bitPattern: $0) }
        shortName.append(0)
        _ = LinuxCalls.setThreadName(pthread_self(), shortName)

        runTurns()
        closeEverything()

        let detach = shared.withLock { state -> Bool in
            // Nobody is going to join (shutdown() was only called on this thread): detach so
            // the thread's resources are released when it exits.
            guard !state.threadClaimed else { return false }
            state.threadClaimed = true
            return true
        }
        finished.leave()
        if detach { pthread_detach(pthread_self()) }
    }

    private func runTurns() {
        while true {
            let count = epoll.wait(into: events, timeoutNanos: waitTimeout())
            for index in 0..<count {
                let id = events.id(at: index)
                // Missing id: closed earlier in this turn; the event is stale.
                guard let target = registrations[id] else { continue }
                target.handleEvents(events.events(at: index))
                runDeferred()
            }
            // A stop seen here still lets this turn's timers and flush happen; tasks queued
            // after the check are run by closeEverything().
            let stop = runTasks()
            runTimers()
            runEndOfTurn()
            flushPending()
            runDeferred()
            if stop { return }
        }
    }

    /// After stop: run the tasks that were accepted before it, flush, then close every
    /// connection and listener. Pending timers are dropped without running.
    private func closeEverything() {
        isClosing = true
        runTasks()
        runEndOfTurn()
        flushPending()
        let open = registrations.sorted { $0.key < $1.key }.map(\.value)
        for target in open {
            target.closeForShutdown()
            runDeferred()
        }
        timers.removeAll()
        deadlines.removeAll()
        endOfTurn = []
        flushQueue = []
        registrations = [:]
        runDeferred()
    }

    // MARK: - Shutdown

    /// Any thread. Stops the loop after it has run the tasks already queued, closes its
    /// connections (flushing them once, connectionDidClose with error nil) and listeners, and
    /// joins the thread. Called on the loop itself it only requests the stop: the loop ends
    /// after the current turn and its thread detaches itself. Idempotent.
    public func shutdown() {
        let onLoop = inEventLoop
        let join = shared.withLock { state -> Bool in
            if !state.stopRequested {
                state.stopRequested = true
                if !state.wakePending {
                    state.wakePending = true
                    wakeup.signal()
                }
            }
            guard !onLoop, !state.threadClaimed else { return false }
            state.threadClaimed = true
            return true
        }
        if onLoop { return }
        if join {
            let thread = pthread_t(threadID.load(ordering: .acquiring))
            let rc = pthread_join(thread, nil)
            precondition(rc == 0, "pthread_join(\(name)) failed: \(rc)")
        } else {
            finished.wait()
        }
    }
}
