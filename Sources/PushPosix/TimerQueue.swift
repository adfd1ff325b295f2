/// Identifies a timer scheduled on one event loop; pass it back to `EventLoop.cancelTimer`.
public struct TimerID: Hashable, Sendable {
    /// Where the timer's callback is kept, and which timer it was (slots are reused).
    let slot: Int
    let sequence: UInt64
}

/// The loop's timers: a binary min-heap keyed by (deadline, sequence) so equal deadlines fire in the
/// order they were scheduled, and the callbacks in an array of slots reused through a free list.
///
/// Cancelling empties the timer's slot (O(1), no hashing: a dictionary of callbacks keyed by id
/// cost a hash on every schedule and cancel, and a call schedules and cancels a few); the heap
/// entry is skipped when it surfaces, or dropped by `compact()` if too many pile up. A slot reused
/// by a later timer has a different sequence number, so a stale entry never fires it.
/// Not thread-safe: owned by one EventLoop and used on its thread only.
struct TimerQueue {
    private struct Entry {
        let deadline: UInt64
        let sequence: UInt64
        let slot: Int
        func fires(before other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private struct Slot {
        var sequence: UInt64
        var work: (() -> Void)?
    }

    private var heap: [Entry] = []
    private var slots: [Slot] = []
    /// Slots without a timer; every other slot holds a live one.
    private var freeSlots: [Int] = []
    private var nextSequence: UInt64 = 1

    var count: Int { slots.count - freeSlots.count }
    var isEmpty: Bool { count == 0 }

    mutating func schedule(deadline: UInt64, _ work: @escaping () -> Void) -> TimerID {
        let sequence = nextSequence
        nextSequence += 1
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = Slot(sequence: sequence, work: work)
        } else {
            slot = slots.count
            slots.append(Slot(sequence: sequence, work: work))
        }
        push(Entry(deadline: deadline, sequence: sequence, slot: slot))
        return TimerID(slot: slot, sequence: sequence)
    }

    mutating func cancel(_ id: TimerID) {
        guard id.slot < slots.count, Self.isLive(slot: id.slot, sequence: id.sequence, in: slots) else { return }
        release(id.slot)
        if heap.count > 64 && heap.count > 4 * count { compact() }
    }

    /// The earliest deadline among live timers, discarding cancelled entries on the way.
    mutating func nextDeadline() -> UInt64? {
        while let top = heap.first {
            if Self.isLive(slot: top.slot, sequence: top.sequence, in: slots) { return top.deadline }
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
            if Self.isLive(slot: top.slot, sequence: top.sequence, in: slots), let work = slots[top.slot].work {
                release(top.slot)
                due.append(work)
            }
        }
        return due
    }

    mutating func removeAll() {
        heap.removeAll()
        slots.removeAll()
        freeSlots.removeAll()
    }

    /// Whether timer `sequence` still waits in `slot` (not fired, not cancelled, slot not reused).
    private static func isLive(slot: Int, sequence: UInt64, in slots: [Slot]) -> Bool {
        slots[slot].sequence == sequence && slots[slot].work != nil
    }

    /// Empties a live timer's slot for reuse.
    private mutating func release(_ slot: Int) {
        slots[slot].work = nil
        freeSlots.append(slot)
    }

    private mutating func compact() {
        let slots = self.slots
        heap.removeAll { !Self.isLive(slot: $0.slot, sequence: $0.sequence, in: slots) }
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
