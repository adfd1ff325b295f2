import Dispatch
import Glibc
import PushPosix
import Testing

@Suite("EventLoop tasks and timers")
struct EventLoopTests {
    @Test("execute() from another thread runs on the loop, in order")
    func executeRunsInOrder() throws {
        let loop = try EventLoop.spawn(name: "exec-order")
        defer { loop.shutdown() }
        #expect(!loop.inEventLoop)

        let seen = Shared<[Int]>([])
        let onLoopThread = Shared(true)
        let done = DispatchSemaphore(value: 0)
        let count = 2000
        // Two producer threads; each one's tasks must stay in its own submission order.
        DispatchQueue.concurrentPerform(iterations: 2) { producer in
            for i in 0..<count {
                let value = producer * count + i
                loop.execute {
                    if !loop.inEventLoop { onLoopThread.update { $0 = false } }
                    let total = seen.update {
                        $0.append(value)
                        return $0.count
                    }
                    if total == 2 * count { done.signal() }
                }
            }
        }
        #expect(waitFor(done))
        #expect(onLoopThread.value)
        let values = seen.value
        #expect(values.count == 2 * count)
        #expect(values.filter { $0 < count } == Array(0..<count))
        #expect(values.filter { $0 >= count } == Array(count..<(2 * count)))
    }

    @Test("timers fire in deadline order and cancelled ones do not fire")
    func timersFireInDeadlineOrder() throws {
        let loop = try EventLoop.spawn(name: "timers")
        defer { loop.shutdown() }
        let fired = Shared<[String]>([])
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            let start = loop.now
            loop.schedule(after: .milliseconds(30)) { fired.update { $0.append("c") } }
            loop.schedule(after: .milliseconds(10)) { fired.update { $0.append("a") } }
            let cancelled = loop.schedule(after: .milliseconds(15)) { fired.update { $0.append("x") } }
            loop.schedule(after: .milliseconds(20)) { fired.update { $0.append("b") } }
            loop.schedule(after: .zero) { fired.update { $0.append("now") } }
            loop.schedule(after: .milliseconds(10)) { fired.update { $0.append("a2") } }
            loop.cancelTimer(cancelled)
            loop.schedule(after: .milliseconds(40)) {
                // Never early: 40 ms of monotonic time have passed.
                fired.update { $0.append(loop.now - start >= 40_000_000 ? "end" : "early") }
                done.signal()
            }
        }
        #expect(waitFor(done))
        #expect(fired.value == ["now", "a", "a2", "b", "c", "end"])
    }

    @Test("a timer that re-arms itself with zero delay does not starve tasks")
    func zeroDelayTimerDoesNotStarve() throws {
        let loop = try EventLoop.spawn(name: "timer-starve")
        defer { loop.shutdown() }
        let ticks = Shared(0)
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            func tick() {
                ticks.update { $0 += 1 }
                loop.schedule(after: .zero, tick)
            }
            tick()
        }
        loop.execute { done.signal() }
        #expect(waitFor(done))
        #expect(ticks.value >= 1)
    }

    @Test("tasks submitted after shutdown are dropped; shutdown is idempotent")
    func executeAfterShutdown() throws {
        let loop = try EventLoop.spawn(name: "late")
        let ran = Shared(0)
        let accepted = loop.tryExecute { ran.update { $0 += 1 } }
        #expect(accepted)
        loop.shutdown()
        #expect(ran.value == 1)  // already-queued tasks run before the loop stops
        #expect(!loop.tryExecute { ran.update { $0 += 1 } })
        loop.execute { ran.update { $0 += 1 } }
        loop.shutdown()
        #expect(ran.value == 1)
    }

    @Test("shutdown called on the loop itself stops it")
    func shutdownFromLoop() throws {
        let loop = try EventLoop.spawn(name: "self-stop")
        loop.execute { loop.shutdown() }
        loop.shutdown()  // waits for the thread that stopped itself
        #expect(!loop.tryExecute {})
    }
}
