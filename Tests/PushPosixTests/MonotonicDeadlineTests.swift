import PushPosix
import Testing

@Suite("Deadlines on the loop clock")
struct MonotonicDeadlineTests {
    @Test("a delay in the loop's nanoseconds: never early, at most 3 ns late, clamped")
    func delayNanoseconds() {
        #expect(MonotonicDeadline.nanoseconds(in: .zero) == 0)
        #expect(MonotonicDeadline.nanoseconds(in: .nanoseconds(-5)) == 0)
        #expect(MonotonicDeadline.nanoseconds(in: .seconds(-30)) == 0)
        for nanoseconds: Int64 in [1, 2, 999, 1_000_000, 19_999_999_999, 29_500_000_000, 86_400_000_000_123] {
            let converted = MonotonicDeadline.nanoseconds(in: .nanoseconds(nanoseconds))
            #expect(converted >= UInt64(nanoseconds) && converted <= UInt64(nanoseconds) + 3, "\(nanoseconds)")
        }
        #expect(MonotonicDeadline.nanoseconds(in: .seconds(1) + .nanoseconds(1) / 2) >= 1_000_000_001)
        #expect(MonotonicDeadline.nanoseconds(in: .seconds(365 * 86_400)) == 1 << 62)
        #expect((3_000_010...3_000_013).contains(MonotonicDeadline.after(.milliseconds(3), from: 10)))
    }

    @Test("a continuous-clock deadline and back: the same instant, to the time the conversion took")
    func roundTrip() {
        for delay: Duration in [.seconds(5), .milliseconds(1), .zero] {
            let before = ContinuousClock.now
            let deadline = before + delay
            let back = MonotonicDeadline.instant(of: MonotonicDeadline.nanoseconds(of: deadline))
            let after = ContinuousClock.now
            // Each conversion reads both clocks at slightly different moments: the error is at
            // most the time between the reads (plus the 3 ns of rounding up).
            #expect(back >= deadline - (after - before) - .nanoseconds(3), "\(delay)")
            #expect(back <= deadline + (after - before) + .nanoseconds(3), "\(delay)")
        }
    }

    @Test("a deadline already past is now on the loop clock (a timer at it fires at once)")
    func pastDeadline() {
        let before = EventLoop.monotonicNow
        let converted = MonotonicDeadline.nanoseconds(of: .now - .milliseconds(250))
        #expect(converted >= before && converted <= EventLoop.monotonicNow)
        let past = MonotonicDeadline.instant(of: before &- 250_000_000)
        #expect(past <= .now - .milliseconds(250))
    }
}
