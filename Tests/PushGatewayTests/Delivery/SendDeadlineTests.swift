import PushPosix
import Testing

@testable import PushGateway

/// A Send's deadline on the loop clock (``MonotonicDeadline``): the client's or
/// `send_timeout_seconds` from the Send's start, whichever comes first, answered a margin before.
@Suite("Send deadline")
struct SendDeadlineTests {
    static let second: UInt64 = 1_000_000_000

    static func configuration(timeout seconds: Int) -> GatewayConfiguration {
        var config = GatewayConfiguration()
        config.sendTimeoutSeconds = seconds
        return config
    }

    @Test func theTimeoutCountsFromTheSendsStart() {
        let start: UInt64 = 5 * Self.second
        let deadline = PushService.sendDeadline(nil, Self.configuration(timeout: 300), now: start)
        #expect(deadline == start + 300 * Self.second)
        #expect(PushService.sendDeadline(nil, Self.configuration(timeout: 0), now: start) == nil)
    }

    @Test func theEarlierOfTheClientsDeadlineAndTheTimeoutWins() {
        let now: UInt64 = 1_000 * Self.second
        let config = Self.configuration(timeout: 300)
        #expect(PushService.sendDeadline(now + 2 * Self.second, config, now: now) == now + 2 * Self.second)
        #expect(PushService.sendDeadline(now + 3_600 * Self.second, config, now: now) == now + 300 * Self.second)
        let unbounded = PushService.sendDeadline(now + 3_600 * Self.second, Self.configuration(timeout: 0), now: now)
        #expect(unbounded == now + 3_600 * Self.second)
    }

    @Test func theAnswerComesATwentiethOfTheTimeLeftEarlyFrom20To500Milliseconds() {
        let now: UInt64 = 1_000 * Self.second
        let ms: UInt64 = 1_000_000
        let far = now + 300 * Self.second
        #expect(NotificationDelivery.answerTime(far, now: now) == far - 500 * ms)
        #expect(NotificationDelivery.answerTime(now + 10 * Self.second, now: now) == now + 10 * Self.second - 500 * ms)
        #expect(NotificationDelivery.answerTime(now + 2 * Self.second, now: now) == now + 2 * Self.second - 100 * ms)
        #expect(NotificationDelivery.answerTime(now + 400 * ms, now: now) == now + 400 * ms - 20 * ms)
        #expect(NotificationDelivery.answerTime(now + 5 * ms, now: now) == now + 5 * ms - 20 * ms)
        // Already past: still 20 ms before it (the timer then fires at once).
        #expect(NotificationDelivery.answerTime(now - Self.second, now: now) == now - Self.second - 20 * ms)
        #expect(NotificationDelivery.answerTime(10 * ms, now: now) == 0)
    }

    @Test func aClientsContinuousClockDeadlineIsAnsweredTheSameMarginBefore() {
        let before = ContinuousClock.now
        let deadline = before + .seconds(60)
        let loopDeadline = MonotonicDeadline.nanoseconds(of: deadline)
        let answer = MonotonicDeadline.instant(
            of: NotificationDelivery.answerTime(loopDeadline, now: EventLoop.monotonicNow))
        // Exact but for the time the clock conversions took.
        let slack = ContinuousClock.now - before + .nanoseconds(3)
        #expect(answer >= deadline - .milliseconds(500) - slack)
        #expect(answer <= deadline - .milliseconds(500) + slack)
    }
}
