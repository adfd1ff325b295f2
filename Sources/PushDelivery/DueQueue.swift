/// Elements that become due at a time: a binary min-heap on (due, order of insertion), so a
/// provider outage that sends 20,000 requests into their retry backoff costs log n each, not a
/// timer each.
struct DueQueue<Element> {
    private struct Entry {
        let due: UInt64
        let sequence: UInt64
        let element: Element
        func precedes(_ other: Entry) -> Bool {
            due != other.due ? due < other.due : sequence < other.sequence
        }
    }

    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }
    /// The earliest due time; nil when empty.
    var nextDue: UInt64? { heap.isEmpty ? nil : heap[0].due }  // not `first`: that copies the entry

    mutating func insert(_ element: Element, due: UInt64) {
        heap.append(Entry(due: due, sequence: nextSequence, element: element))
        nextSequence &+= 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest element if it is due at `now`.
    mutating func popDue(now: UInt64) -> Element? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first.element }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            var smallest = left
            if left + 1 < heap.count && heap[left + 1].precedes(heap[left]) { smallest = left + 1 }
            guard heap[smallest].precedes(heap[parent]) else { break }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
        return first.element
    }

    /// The elements `predicate` picks, in no particular order; the rest stay, due as they were
    /// (the heap is rebuilt by sorting, O(n log n): for a sweep now and then, not per element).
    mutating func removeAll(where predicate: (Element) -> Bool) -> [Element] {
        var removed: [Element] = []
        heap.removeAll { entry in
            guard predicate(entry.element) else { return false }
            removed.append(entry.element)
            return true
        }
        guard !removed.isEmpty else { return removed }
        // Entries are ordered by (due, sequence), so sorting makes a valid heap.
        heap.sort { $0.precedes($1) }
        return removed
    }

    /// Everything, in no particular order; the queue is left empty.
    mutating func removeAll() -> [Element] {
        defer { heap.removeAll() }
        return heap.map(\.element)
    }
}
