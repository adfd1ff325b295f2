import Glibc

/// Timers, deadlines and end-of-turn work: what a turn runs after its events and tasks, and how
/// long the next epoll wait may last.
extension EventLoop {
    /// Monotonic time in nanoseconds (CLOCK_MONOTONIC, arbitrary origin). Deadlines passed to
    /// `schedule(at:)` use the same scale. Any thread.
    public var now: UInt64 { Self.monotonicNow }

    /// ``now`` without a loop at hand.
    public static var monotonicNow: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Loop thread only. Runs `work` on the loop once `delay` has passed (to the nanosecond with epoll_pwait2, else 1 ms;
    /// never early). Negative delays count as zero; the timer then fires next turn.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) -> TimerID {
        schedule(at: MonotonicDeadline.after(delay, from: now), work)
    }

    /// Loop thread only. Runs `work` once `now` >= `deadline` (see `now`).
    @discardableResult
    public func schedule(at deadline: UInt64, _ work: @escaping () -> Void) -> TimerID {
        preconditionInEventLoop()
        return timers.schedule(deadline: deadline, work)
    }

    /// Loop thread only. Cancelling a timer that already fired (or was cancelled) does nothing.
    public func cancelTimer(_ id: TimerID) {
        preconditionInEventLoop()
        timers.cancel(id)
    }

    /// Loop thread only. Calls `waiter`'s ``DeadlineWaiter/deadlinePassed()`` on the loop once `now`
    /// >= `deadline`, unless ``cancelDeadline(_:)`` comes first. Cheaper than a timer when deadlines
    /// of a kind come in order (``DeadlineLanes``); a timer when they do not. The waiter must not
    /// be waiting already.
    public func startDeadline(_ waiter: DeadlineWaiter, at deadline: UInt64) {
        preconditionInEventLoop()
        assert(!waiter.waitsForDeadline, "a waiter waits for one deadline at a time")
        if deadlines.append(waiter, at: deadline) { return }
        let id = timers.schedule(deadline: deadline) {
            waiter.deadlinePlace = .none
            waiter.deadlinePassed()
        }
        waiter.deadlinePlace = .timer(id)
    }

    /// Loop thread only. Ends `waiter`'s wait without calling it; nothing if it waits for none.
    public func cancelDeadline(_ waiter: DeadlineWaiter) {
        preconditionInEventLoop()
        switch waiter.deadlinePlace {
        case .none:
            return
        case .lane:
            deadlines.remove(waiter)
        case .timer(let id):
            timers.cancel(id)
            waiter.deadlinePlace = .none
        }
    }

    /// Loop thread only. Runs `work` once this turn's events, tasks and timers are handled, right
    /// before sockets are flushed: protocol layers use it to turn everything produced in one turn
    /// into one batch of frames (and one TLS record run) instead of one per event. Work added while
    /// these run joins the same round.
    public func executeAtEndOfTurn(_ work: @escaping () -> Void) {
        preconditionInEventLoop()
        endOfTurn.append(work)
    }

    func runEndOfTurn() {
        isRunningEndOfTurn = true
        defer { isRunningEndOfTurn = false }
        while !endOfTurn.isEmpty {
            var batch = spareEndOfTurn
            swap(&batch, &endOfTurn)
            for work in batch {
                work()
                runDeferred()
            }
            batch.removeAll(keepingCapacity: true)
            spareEndOfTurn = batch
        }
    }

    func runTimers() {
        guard !timers.isEmpty || !deadlines.isEmpty else { return }
        let current = now
        if !deadlines.isEmpty {
            for waiter in deadlines.removeDue(now: current) {
                waiter.deadlinePassed()
                runDeferred()
            }
        }
        guard !timers.isEmpty else { return }
        for work in timers.takeExpired(now: current) {
            work()
            runDeferred()
        }
    }

    /// epoll_wait timeout in nanoseconds: 0 if output is waiting to be flushed, else until the
    /// nearest timer, else forever (-1).
    func waitTimeout() -> Int64 {
        if !flushQueue.isEmpty || !deferred.isEmpty || !endOfTurn.isEmpty { return 0 }
        let waiter = deadlines.isEmpty ? nil : deadlines.earliestDeadline
        let deadline = min(timers.nextDeadline() ?? .max, waiter ?? .max)
        guard deadline != .max else { return -1 }
        let current = now
        guard deadline > current else { return 0 }
        return Int64(clamping: deadline - current)
    }
}
