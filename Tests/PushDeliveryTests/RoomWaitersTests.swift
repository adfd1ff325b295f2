import Testing

@testable import PushDelivery

/// Waiting for room in an app's bounded queue: woken by releases that make room for the amount
/// waited for, and ended by cancellation.
@Suite("Room waiters")
struct RoomWaitersTests {
    /// Waits (yielding) until `waiters` has `count` tasks waiting.
    static func settle(_ waiters: RoomWaiters, to count: Int) async {
        while waiters.count != count { await Task.yield() }
    }

    @Test func aWaiterIsWokenOnlyByARoomItFits() async {
        let waiters = RoomWaiters()
        let waiting = Task { await waiters.wait(for: 5, room: { 0 }) }
        await Self.settle(waiters, to: 1)
        waiters.wake(room: 4)
        #expect(waiters.count == 1)
        waiters.wake(room: 5)
        #expect(await waiting.value)
        #expect(waiters.count == 0)
    }

    @Test func aWakeFitsTheOldestWaitersFirstAndNoMore() async {
        let waiters = RoomWaiters()
        let first = Task { await waiters.wait(for: 3, room: { 0 }) }
        await Self.settle(waiters, to: 1)
        let second = Task { await waiters.wait(for: 3, room: { 0 }) }
        await Self.settle(waiters, to: 2)
        waiters.wake(room: 4)
        #expect(await first.value)
        #expect(waiters.count == 1)
        waiters.wake(room: 3)
        #expect(await second.value)
    }

    @Test func roomMadeBeforeRegisteringIsNotMissed() async {
        let waiters = RoomWaiters()
        #expect(await waiters.wait(for: 2, room: { 2 }))
        #expect(waiters.count == 0)
    }

    @Test func cancellationEndsTheWait() async {
        let waiters = RoomWaiters()
        let waiting = Task { await waiters.wait(for: 1, room: { 0 }) }
        await Self.settle(waiters, to: 1)
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(waiters.count == 0)
        // A task cancelled before it waits does not wait.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await waiters.wait(for: 1, room: { 0 })
        }
        #expect(await cancelled.value == false)
        #expect(waiters.count == 0)
    }

    @Test func aFullQueueIsReservedOnceARequestGivesItsRoomBack() async {
        let usage = ProviderAppUsage(limit: 2)
        #expect(usage.reserve(2))
        let reserving = Task { await usage.reserveWaiting(2) }
        usage.release(1)
        usage.release(1)
        #expect(await reserving.value)
        #expect(usage.count == 2)
        #expect(!usage.reserve(1))
    }
}
