/// Deadlines as a loop keeps them: nanoseconds of ``EventLoop/monotonicNow``'s clock
/// (`CLOCK_MONOTONIC`), the clock of its timers.
///
/// A call's and a Send's deadline is one of these from the call's start to the Send's timer, not a
/// `ContinuousClock.Instant`: that type is resilient, so each optional of it is copied, tested
/// and destroyed through its value witnesses, a class storing one finds the offsets of its later
/// fields at run time, and each step reads the clock again.
public enum MonotonicDeadline {
    /// `delay` in whole nanoseconds, rounded up (a timer never fires early, and may fire up to
    /// 3 ns late), 0 for a delay that is over, 2^62 (a century) past 56 days. Its attoseconds are
    /// taken in units of 2^30 (1.07 ns), which a Double holds exactly: no 128-bit division (a
    /// `Duration`'s components cost two).
    public static func nanoseconds(in delay: Duration) -> UInt64 {
        let attoseconds = delay.attoseconds
        guard attoseconds > 0 else { return 0 }
        let units = (attoseconds + (1 << 30 - 1)) >> 30  // rounded up
        guard units < 1 << 52 else { return 1 << 62 }
        return UInt64((Double(Int64(truncatingIfNeeded: units)) * 1.073_741_824).rounded(.up))
    }

    /// `delay` from `now` (nanoseconds of the same clock).
    public static func after(_ delay: Duration, from now: UInt64) -> UInt64 {
        now &+ nanoseconds(in: delay)
    }

    /// `deadline` on the loop clock, rounded up (never early).
    public static func nanoseconds(of deadline: ContinuousClock.Instant) -> UInt64 {
        after(ContinuousClock.now.duration(to: deadline), from: EventLoop.monotonicNow)
    }

    /// `deadline` (of the loop clock) on the continuous clock, for an API that takes one.
    public static func instant(of deadline: UInt64) -> ContinuousClock.Instant {
        let now = EventLoop.monotonicNow
        if deadline >= now { return ContinuousClock.now + .nanoseconds(Int64(clamping: deadline - now)) }
        return ContinuousClock.now - .nanoseconds(Int64(clamping: now - deadline))
    }
}
