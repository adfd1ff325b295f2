import Dispatch
import PushSync
import Testing

@Suite("Locked")
struct LockedTests {
    /// Under `make test-tsan` this is also the check that TSan sees the lock: with a lock it cannot
    /// see (Synchronization.Mutex on Linux) the contended increments are reported as races.
    @Test("contended increments from several threads all count")
    func contendedIncrements() {
        let counter = Locked(0)
        let threads = 4
        let perThread = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<perThread { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == threads * perThread)
    }

    struct Refused: Error, Equatable {}

    @Test("a typed error thrown in the body comes out, and the lock is released")
    func typedThrows() {
        let state = Locked([1, 2])
        #expect(throws: Refused()) {
            try state.withLock { (values: inout [Int]) throws(Refused) in
                values.append(3)
                throw Refused()
            }
        }
        // Taken again: the throw unlocked it. The change made before the throw stays.
        #expect(state.withLock { $0 } == [1, 2, 3])
    }

    final class Tracked: Sendable {
        let onDeinit: @Sendable () -> Void
        init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
        deinit { onDeinit() }
    }

    @Test("the value is released with the last copy of the lock")
    func releasesValue() {
        let released = Locked(false)
        do {
            let locked = Locked(Tracked { released.withLock { $0 = true } })
            let copy = locked
            _ = copy.withLock { $0 }
        }
        #expect(released.withLock { $0 })
    }
}
