import Testing

@testable import PushPosix

@Suite("DeadlineQueue")
struct DeadlineQueueTests {
    /// An element waiting in two queues at once, one link each (as a gRPC call does).
    final class Element {
        let name: String
        var first = DeadlineQueueLink<Element>()
        var second = DeadlineQueueLink<Element>()
        init(_ name: String) { self.name = name }
    }

    enum First: DeadlineQueueLinkage {
        static func withLink<R>(of element: Element, _ body: (inout DeadlineQueueLink<Element>) -> R) -> R {
            body(&element.first)
        }
    }

    enum Second: DeadlineQueueLinkage {
        static func withLink<R>(of element: Element, _ body: (inout DeadlineQueueLink<Element>) -> R) -> R {
            body(&element.second)
        }
    }

    @Test("an element waits in two queues through two links; leaving one keeps its place in the other")
    func twoLinks() {
        var first = DeadlineQueue<First>()
        var second = DeadlineQueue<Second>()
        let elements = (0..<3).map { Element("e\($0)") }
        for (index, element) in elements.enumerated() {
            first.append(element, deadline: UInt64(10 * index))
            second.append(element, deadline: UInt64(100 + index))
        }
        first.remove(elements[1])  // from the middle of the first only
        #expect(!elements[1].first.isQueued && elements[1].second.isQueued)
        #expect(first.oldestDeadline == 0 && second.oldestDeadline == 100)
        var due: [Element] = []
        first.removeDue(now: 20, into: &due)
        #expect(due.map(\.name) == ["e0", "e2"] && first.isEmpty && first.oldestDeadline == nil)
        #expect(first.accepts(0))
        second.remove(elements[0])  // the front
        second.remove(elements[0])  // not queued any more: nothing
        #expect(second.oldest === elements[1] && !second.accepts(101) && second.accepts(102))
        second.remove(elements[2])  // the back
        due = []
        second.removeDue(now: 1_000, into: &due)
        #expect(due.map(\.name) == ["e1"] && second.isEmpty)
    }

    @Test("a queue holds its elements and lets go of them when they leave, or when it is emptied")
    func references() {
        var queue = DeadlineQueue<First>()
        weak var left: Element?
        weak var emptied: Element?
        do {
            let one = Element("one")
            let two = Element("two")
            left = one
            emptied = two
            queue.append(one, deadline: 1)
            queue.append(two, deadline: 2)
        }
        #expect(left != nil && emptied != nil)
        queue.remove(left!)
        #expect(left == nil && emptied != nil)
        queue.removeAll()
        #expect(emptied == nil && queue.isEmpty)
    }
}
