/// An element's place in a ``DeadlineQueue``, stored in the element itself: joining and leaving
/// allocate nothing, and an element leaves from anywhere in the queue in a few pointer writes.
/// The neighbours are unmanaged: the queue holds one reference to each element in it (taken when
/// it joins, given back when it leaves), and walking or relinking retains nothing.
public struct DeadlineQueueLink<Element: AnyObject> {
    @usableFromInline var queuedDeadline: UInt64 = 0
    @usableFromInline var queued = false
    @usableFromInline var newer: Unmanaged<Element>?
    @usableFromInline var older: Unmanaged<Element>?

    @inlinable public init() {}

    @inlinable init(deadline: UInt64, older: Unmanaged<Element>?) {
        queuedDeadline = deadline
        queued = true
        self.older = older
    }

    /// The element's deadline (loop time), valid while it is queued.
    @inlinable public var deadline: UInt64 { queuedDeadline }
    /// Whether the element is in the queue this link belongs to.
    @inlinable public var isQueued: Bool { queued }
}

/// Which link of its elements a ``DeadlineQueue`` uses: an element may wait in more than one
/// queue at once (a gRPC call waits for its request and for its `grpc-timeout`), each through
/// its own stored ``DeadlineQueueLink``.
public protocol DeadlineQueueLinkage {
    associatedtype Element: AnyObject
    /// Runs `body` on `element`'s link for this queue.
    static func withLink<Result>(
        of element: Element, _ body: (inout DeadlineQueueLink<Element>) -> Result
    ) -> Result
}

/// Objects waiting for deadlines that never decrease, oldest first: a FIFO linked through the
/// objects themselves, so the next deadline to pass is always the oldest's. Deadlines of one kind
/// come in that order (the start of each plus the same limit, on one clock): a connection's
/// request deadlines, a loop's deadline lanes (``DeadlineLanes``).
///
/// A plain value; `@inlinable`, so each user's specialization touches its link directly.
public struct DeadlineQueue<Linkage: DeadlineQueueLinkage> {
    public typealias Element = Linkage.Element

    @usableFromInline var oldestElement: Unmanaged<Element>?
    @usableFromInline var newestElement: Unmanaged<Element>?

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { oldestElement == nil }

    /// The element whose deadline is the next to pass.
    @inlinable public var oldest: Element? { oldestElement?.takeUnretainedValue() }

    /// The deadline of ``oldest``; nil when empty.
    @inlinable public var oldestDeadline: UInt64? {
        guard let oldestElement else { return nil }
        return oldestElement._withUnsafeGuaranteedRef { Linkage.withLink(of: $0) { $0.deadline } }
    }

    /// Whether a `deadline` may join: not earlier than the newest element's.
    @inlinable public func accepts(_ deadline: UInt64) -> Bool {
        guard let newestElement else { return true }
        return newestElement._withUnsafeGuaranteedRef { Linkage.withLink(of: $0) { $0.deadline } } <= deadline
    }

    /// Adds `element` (not queued) as the newest; `deadline` must be ``accepts(_:)``-able.
    @inlinable public mutating func append(_ element: Element, deadline: UInt64) {
        assert(accepts(deadline), "a deadline queue's deadlines never decrease")
        let joining = Unmanaged.passRetained(element)
        let newest = newestElement
        Linkage.withLink(of: element) { $0 = DeadlineQueueLink(deadline: deadline, older: newest) }
        if let newest {
            newest._withUnsafeGuaranteedRef { Linkage.withLink(of: $0) { $0.newer = joining } }
        } else {
            oldestElement = joining
        }
        newestElement = joining
    }

    /// Takes `element` out, from wherever it is; nothing if it is not queued. It must not be in
    /// another queue that uses the same link.
    @inlinable public mutating func remove(_ element: Element) {
        let link = Linkage.withLink(of: element) { link in
            defer { link = DeadlineQueueLink() }
            return link
        }
        guard link.isQueued else { return }
        if let older = link.older {
            older._withUnsafeGuaranteedRef { Linkage.withLink(of: $0) { $0.newer = link.newer } }
        } else {
            oldestElement = link.newer
        }
        if let newer = link.newer {
            newer._withUnsafeGuaranteedRef { Linkage.withLink(of: $0) { $0.older = link.older } }
        } else {
            newestElement = link.older
        }
        // The queue's reference; the caller holds its own.
        Unmanaged.passUnretained(element).release()
    }

    /// Takes out the elements whose deadline is at or before `now`, oldest first, into `due`.
    @inlinable public mutating func removeDue(now: UInt64, into due: inout [Element]) {
        while let element = oldest, Linkage.withLink(of: element, { $0.deadline }) <= now {
            remove(element)
            due.append(element)
        }
    }

    /// Takes every element out, none told.
    @inlinable public mutating func removeAll() {
        while let element = oldest { remove(element) }
    }
}
