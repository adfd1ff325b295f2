import Testing

@testable import PushPosix

@Suite("TimerQueue")
struct TimerQueueTests {
    final class Fired: @unchecked Sendable { var names: [String] = [] }

    @Test("timers fire in deadline order, equal deadlines in the order scheduled")
    func order() {
        var queue = TimerQueue()
        let fired = Fired()
        _ = queue.schedule(deadline: 30) { fired.names.append("c") }
        _ = queue.schedule(deadline: 10) { fired.names.append("a1") }
        _ = queue.schedule(deadline: 10) { fired.names.append("a2") }
        _ = queue.schedule(deadline: 20) { fired.names.append("b") }
        #expect(queue.nextDeadline() == 10)
        for work in queue.takeExpired(now: 25) { work() }
        #expect(fired.names == ["a1", "a2", "b"])
        #expect(queue.count == 1)
        #expect(queue.nextDeadline() == 30)
    }

    @Test("a cancelled timer never fires, and its reused slot does not fire it either")
    func cancelAndReuse() {
        var queue = TimerQueue()
        let fired = Fired()
        let first = queue.schedule(deadline: 10) { fired.names.append("first") }
        queue.cancel(first)
        #expect(queue.isEmpty)
        // Takes the freed slot; the old heap entry (deadline 10) must not fire the new callback.
        let second = queue.schedule(deadline: 50) { fired.names.append("second") }
        #expect(second.slot == first.slot && second != first)
        queue.cancel(first)  // stale id: no effect on the slot's new timer
        #expect(queue.count == 1)
        for work in queue.takeExpired(now: 20) { work() }
        #expect(fired.names.isEmpty)
        #expect(queue.nextDeadline() == 50)
        for work in queue.takeExpired(now: 50) { work() }
        #expect(fired.names == ["second"])
        queue.cancel(second)  // already fired: no effect
        #expect(queue.isEmpty && queue.nextDeadline() == nil)
    }

    @Test("many scheduled and cancelled timers: the live ones fire, the heap is compacted")
    func churn() {
        var queue = TimerQueue()
        let fired = Fired()
        var kept: [String] = []
        for i in 0..<10_000 {
            let id = queue.schedule(deadline: UInt64(1_000 + i)) { fired.names.append("t\(i)") }
            if i % 100 == 0 { kept.append("t\(i)") } else { queue.cancel(id) }
        }
        #expect(queue.count == kept.count)
        for work in queue.takeExpired(now: 1_000_000) { work() }
        #expect(fired.names == kept)
        #expect(queue.isEmpty)
    }
}
