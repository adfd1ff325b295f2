import Dispatch
import Testing

@testable import PushPosix

/// `#expect` takes copies of what it checks: a noncopyable value's results are checked as locals.
private func expectFits(_ fits: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(fits, sourceLocation: sourceLocation)
}

@Suite("DeadlineLanes")
struct DeadlineLanesTests {
    final class Waiter: DeadlineWaiter, @unchecked Sendable {
        let name: String
        var passed: (String) -> Void = { _ in }
        init(_ name: String) { self.name = name }
        override func deadlinePassed() { passed(name) }
    }

    @Test("deadlines of one kind share a lane; an earlier kind takes the next lane; each lane passes oldest first")
    func lanesByKind() {
        var lanes = DeadlineLanes()
        let sends = (0..<3).map { Waiter("send\($0)") }
        let calls = (0..<2).map { Waiter("call\($0)") }
        expectFits(lanes.append(sends[0], at: 300))
        expectFits(lanes.append(calls[0], at: 100))  // earlier than lane 0's newest: lane 1
        expectFits(lanes.append(sends[1], at: 310))
        expectFits(lanes.append(calls[1], at: 110))
        expectFits(lanes.append(sends[2], at: 320))
        let count = lanes.count
        #expect(count == 5)
        guard case .lane(0) = sends[2].deadlinePlace, case .lane(1) = calls[1].deadlinePlace else {
            Issue.record("sends in lane 0, calls in lane 1")
            return
        }
        let earliest = lanes.earliestDeadline
        #expect(earliest == 100)
        let due99 = lanes.removeDue(now: 99)
        #expect(due99.isEmpty)
        let due305 = lanes.removeDue(now: 305)
        #expect(due305.map { ($0 as! Waiter).name } == ["send0", "call0", "call1"])
        let next = lanes.earliestDeadline
        #expect(next == 310)
        #expect(!calls[0].waitsForDeadline && sends[1].waitsForDeadline)
        let due1000 = lanes.removeDue(now: 1_000)
        #expect(due1000.map { ($0 as! Waiter).name } == ["send1", "send2"])
        let empty = lanes.isEmpty && lanes.earliestDeadline == nil
        #expect(empty)
    }

    @Test("a waiter leaves from the middle, the front or the back of its lane, and the lane stays linked")
    func remove() {
        var lanes = DeadlineLanes()
        let waiters = (0..<4).map { Waiter("w\($0)") }
        for (index, waiter) in waiters.enumerated() { expectFits(lanes.append(waiter, at: UInt64(10 * index))) }
        lanes.remove(waiters[1])
        lanes.remove(waiters[0])
        lanes.remove(waiters[3])
        lanes.remove(waiters[3])  // not in a lane any more: nothing
        let one = lanes.count == 1 && lanes.earliestDeadline == 20
        #expect(one)
        // The lane's newest is w2 now: a later deadline joins behind it.
        expectFits(lanes.append(waiters[0], at: 25))
        let due100 = lanes.removeDue(now: 100)
        #expect(due100.map { ($0 as! Waiter).name } == ["w2", "w0"])
    }

    @Test("more kinds than lanes: a deadline earlier than every lane's newest fits none")
    func full() {
        var lanes = DeadlineLanes()
        let waiters = (0...DeadlineLanes.laneCount).map { Waiter("w\($0)") }
        for (index, waiter) in waiters.enumerated() {
            let fits = lanes.append(waiter, at: UInt64(1_000 - index))
            #expect(fits == (index < DeadlineLanes.laneCount))
        }
        #expect(!waiters.last!.waitsForDeadline)
        lanes.removeAll()
        let empty = lanes.isEmpty
        #expect(empty && waiters.allSatisfy { !$0.waitsForDeadline })
    }

    @Test("a lane holds its waiters, and lets go of them when they leave")
    func references() {
        var lanes = DeadlineLanes()
        weak var held: Waiter?
        do {
            let waiter = Waiter("w")
            held = waiter
            expectFits(lanes.append(waiter, at: 5))
        }
        #expect(held != nil)
        do {
            let due = lanes.removeDue(now: 5)
            #expect(due.count == 1)
        }
        #expect(held == nil)
    }

    @Test("on a loop: deadlines in lanes and one as a timer pass in deadline order, a cancelled one never")
    func onLoop() throws {
        let loop = try EventLoop.spawn(name: "deadlines")
        defer { loop.shutdown() }
        let passed = Shared<[String]>([])
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            let start = loop.now
            var waiters: [Waiter] = []
            // Lanes 0-3 take 40, 30, 20 and 10 ms; 5 ms fits none (a timer); x joins lane 2 behind
            // 20 ms (the first lane it fits), last lane 0 behind 40 ms; y (3 ms) fits none. x and y are
            // cancelled.
            let delays = [("d", 40), ("c", 30), ("b", 20), ("a", 10), ("first", 5), ("x", 25), ("last", 50), ("y", 3)]
            for (name, delay) in delays {
                let deadline = start + UInt64(delay) * 1_000_000
                let waiter = Waiter(name)
                waiter.passed = { name in
                    passed.update { $0.append(loop.now >= deadline ? name : "early \(name)") }
                    if name == "last" { done.signal() }
                }
                waiters.append(waiter)
                loop.startDeadline(waiter, at: deadline)
            }
            guard case .timer = waiters[4].deadlinePlace, case .lane(2) = waiters[5].deadlinePlace else {
                Issue.record("5 ms as a timer, x in lane 2")
                return
            }
            loop.cancelDeadline(waiters[5])
            loop.cancelDeadline(waiters[7])
            #expect(!waiters[5].waitsForDeadline && !waiters[7].waitsForDeadline)
        }
        #expect(waitFor(done))
        #expect(passed.value == ["first", "a", "b", "c", "d", "last"])
    }
}
