import Testing

@testable import PushPosix

@Suite("Resolver table: shared queries, a bounded cache, a bounded number of lookups")
struct ResolverTableTests {
    private let second: UInt64 = 1_000_000_000
    private let address = SocketAddress.literal("192.0.2.7", port: 0)!

    private func isStart(_ decision: ResolverTable<Int>.Decision) -> Bool {
        if case .startLookup = decision { return true }
        return false
    }

    @Test("concurrent askers of one name share one lookup; all of them are told")
    func sharedQuery() {
        var table = ResolverTable<Int>(cacheNanoseconds: 60 * second, maxEntries: 8, maxRunning: 4)
        #expect(isStart(table.lookUp("push.example", for: 1, now: 0)))
        for waiter in 2...5 {
            guard case .joined = table.lookUp("push.example", for: waiter, now: 0) else {
                Issue.record("waiter \(waiter) started another lookup")
                return
            }
        }
        let (waiters, next) = table.finished("push.example", .success([address]), now: second)
        #expect(waiters == [1, 2, 3, 4, 5])
        #expect(next == nil)
        #expect(table.running == 0)
    }

    @Test("an answer is reused until it expires, then looked up again")
    func expiry() {
        var table = ResolverTable<Int>(cacheNanoseconds: 60 * second, maxEntries: 8, maxRunning: 4)
        _ = table.lookUp("a", for: 1, now: 0)
        _ = table.finished("a", .success([address]), now: 0)
        guard case .answered(let kept) = table.lookUp("a", for: 2, now: 59 * second) else {
            Issue.record("a fresh answer was not reused")
            return
        }
        #expect(kept.map(\.hostText) == ["192.0.2.7"])
        #expect(isStart(table.lookUp("a", for: 3, now: 60 * second)))
    }

    @Test("failures are not kept: the next asker looks up again")
    func failuresNotKept() {
        var table = ResolverTable<Int>(cacheNanoseconds: 60 * second, maxEntries: 8, maxRunning: 4)
        _ = table.lookUp("a", for: 1, now: 0)
        let (waiters, _) = table.finished("a", .failure(IOError(errno: 2, reason: "resolving a")), now: 0)
        #expect(waiters == [1])
        #expect(table.cachedCount == 0)
        #expect(isStart(table.lookUp("a", for: 2, now: 1)))
    }

    @Test("past maxRunning, names wait their turn and a finishing thread takes the next")
    func boundedLookups() {
        var table = ResolverTable<Int>(cacheNanoseconds: 60 * second, maxEntries: 8, maxRunning: 2)
        #expect(isStart(table.lookUp("a", for: 1, now: 0)))
        #expect(isStart(table.lookUp("b", for: 2, now: 0)))
        guard case .queued = table.lookUp("c", for: 3, now: 0) else {
            Issue.record("a third lookup ran beyond maxRunning")
            return
        }
        guard case .joined = table.lookUp("c", for: 4, now: 0) else {
            Issue.record("a queued name was not shared")
            return
        }
        #expect(table.running == 2)
        let (_, next) = table.finished("a", .success([address]), now: 0)
        #expect(next == "c")
        #expect(table.running == 2)
        #expect(table.finished("c", .success([address]), now: 0).waiters == [3, 4])
        #expect(table.running == 1)  // nothing queued: that thread ends
        #expect(table.finished("b", .success([address]), now: 0).next == nil)
        #expect(table.running == 0)
    }

    @Test("a lookup thread that could not be started hands its slot to the next queued name")
    func notStarted() {
        var table = ResolverTable<Int>(cacheNanoseconds: 60 * second, maxEntries: 8, maxRunning: 1)
        #expect(isStart(table.lookUp("a", for: 1, now: 0)))
        _ = table.lookUp("b", for: 2, now: 0)
        _ = table.lookUp("b", for: 3, now: 0)
        let (waiters, next) = table.notStarted("a")
        #expect(waiters == [1])
        #expect(next == "b")
        #expect(table.running == 1)
        #expect(table.notStarted("b") == ([2, 3], nil))
        #expect(table.running == 0)
        #expect(isStart(table.lookUp("b", for: 4, now: 0)), "nothing is left pending for good")
    }

    @Test("at most maxEntries answers are kept; the oldest goes first")
    func boundedCache() {
        var table = ResolverTable<Int>(cacheNanoseconds: 60 * second, maxEntries: 3, maxRunning: 1)
        for (index, name) in ["a", "b", "c", "d", "e"].enumerated() {
            _ = table.lookUp(name, for: index, now: UInt64(index) * second)
            _ = table.finished(name, .success([address]), now: UInt64(index) * second)
            #expect(table.cachedCount == min(index + 1, 3))
        }
        #expect(isStart(table.lookUp("a", for: 9, now: 5 * second)))
        _ = table.finished("a", .success([address]), now: 5 * second)
        guard case .answered = table.lookUp("e", for: 10, now: 5 * second) else {
            Issue.record("the newest answer was evicted")
            return
        }
    }
}
