import PushSync
import Synchronization

/// Tasks waiting for room in a bounded queue, each for its own amount. A release wakes the ones
/// the room now fits (oldest first); they take it or wait again. Cancellation ends a wait at once.
final class RoomWaiters: Sendable {
    private struct Waiter {
        let id: Int
        let count: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var nextID = 0
        var waiting: [Waiter] = []
    }

    private let state = Locked(State())
    /// How many wait: a release with none takes no lock.
    private let waitingCount = Atomic<Int>(0)

    /// Tasks waiting now.
    var count: Int { waitingCount.load(ordering: .sequentiallyConsistent) }

    /// Waits until a release leaves room for `count` (true), or the task is cancelled (false).
    /// `room` answers the room now: checked after registering, so no release in between is missed.
    func wait(for count: Int, room: () -> Int) async -> Bool {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let registered = state.withLock { state in
                    // A cancellation before this found nothing to end: see it here.
                    guard !Task.isCancelled else { return false }
                    state.waiting.append(Waiter(id: id, count: count, continuation: continuation))
                    waitingCount.add(1, ordering: .sequentiallyConsistent)
                    return true
                }
                guard registered else { return continuation.resume(returning: false) }
                if room() >= count { end(id, returning: true) }
            }
        } onCancel: {
            end(id, returning: false)
        }
    }

    /// Wakes the waiters `room` fits, oldest first. Inline: a release with nobody waiting (nearly
    /// every one, once per answered request) is one load.
    @inline(__always) func wake(room: Int) {
        guard waitingCount.load(ordering: .sequentiallyConsistent) > 0 else { return }
        wakeWaiting(room: room)
    }

    @inline(never) private func wakeWaiting(room: Int) {
        let woken = state.withLock { state in
            var left = room
            var woken: [CheckedContinuation<Bool, Never>] = []
            state.waiting.removeAll { waiter in
                guard waiter.count <= left else { return false }
                left -= waiter.count
                woken.append(waiter.continuation)
                return true
            }
            waitingCount.subtract(woken.count, ordering: .sequentiallyConsistent)
            return woken
        }
        for continuation in woken { continuation.resume(returning: true) }
    }

    private func end(_ id: Int, returning answer: Bool) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            waitingCount.subtract(1, ordering: .sequentiallyConsistent)
            return state.waiting.remove(at: index)
        }
        waiter?.continuation.resume(returning: answer)
    }
}
