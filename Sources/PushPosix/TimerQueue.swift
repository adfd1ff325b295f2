/// Identifies a timer scheduled on one event loop; pass it back to `EventLoop.cancelTimer`.
public struct TimerID: Hashable, Sendable {
    let raw: UInt64
}

/// The loop's timers: a binary min-heap keyed by (deadline, id) so equal deadlines fire in the
/// order they were scheduled. Cancelling only removes the callback from `live`; the heap entry
/// is skipped when it surfaces (or dropped by `compact()` if too many pile up), which keeps
/// cancel O(1) instead of searching the heap.
/// Not thread-safe: owned by one EventLoop and used on its thread only.
struct TimerQueue {
    private struct Entry {
        let deadline: UInt64
        let id: UInt64
        func fires(before other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private var heap: [Entry] = []
    private var live: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 1

    var isEmpty: Bool { live.isEmpty }
    var count: Int { live.count }

    mutating func schedule(deadline: UInt64, _ work: @escaping () -> Void) -> TimerID {
        let id = nextID
        nextID += 1
        live[id] = work
        push(Entry(deadline: deadline, id: id))
        return TimerID(raw: id)
    }

    mutating func cancel(_ id: TimerID) {
        guard live.removeValue(forKey: id.raw) != nil else { return }
        if heap.count > 64 && heap.count > 4 * live.count { compact() }
    }

    /// The earliest deadline among live timers, discarding cancelled entries on the way.
    mutating func nextDeadline() -> UInt64? {
        while let top = heap.first {
            if live[top.id] != nil { return top.deadline }
            popTop()
        }
        return nil
    }

    /// Removes and returns, in firing order, every live timer whose deadline is <= now.
    /// Timers that these callbacks schedule land in the heap and wait for the next turn, so
    /// a timer that re-arms itself with zero delay cannot starve the loop.
    mutating func takeExpired(now: UInt64) -> [() -> Void] {
        var due: [() -> Void] = []
        while let top = heap.first, top.deadline <= now {
            popTop()
            if let work = live.removeValue(forKey: top.id) { due.append(work) }
        }
        return due
    }

    mutating func removeAll() {
        heap.removeAll()
        live.removeAll()
    }

    private mutating func compact() {
        heap.removeAll { live[$0.id] == nil }
        // Heapify bottom-up.
        var i = heap.count / 2 - 1
        while i >= 0 {
            siftDown(i)
            i -= 1
        }
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].fires(before: heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var best = left
            let right = left + 1
            if right < heap.count && heap[right].fires(before: heap[left]) { best = right }
            guard heap[best].fires(before: heap[parent]) else { return }
            heap.swapAt(best, parent)
            parent = best
        }
    }
}
