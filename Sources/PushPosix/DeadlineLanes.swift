/// Something that waits on its event loop for a deadline (``EventLoop/startDeadline(_:at:)``):
/// a Send's collector, answered at its deadline if its results are not all in by then.
///
/// A base class, not a timer per object: a loop timer takes a closure, a slot, a heap entry and
/// a cancelling, while the waiter's place in its loop's ``DeadlineLanes`` is a few pointers. Loop
/// thread only, like the loop's timers.
open class DeadlineWaiter: @unchecked Sendable {
    /// Where the waiter waits: nowhere, in a lane, or (every lane out of order) as a timer.
    enum Place {
        case none
        case lane(Int)
        case timer(TimerID)
    }

    var deadlinePlace = Place.none
    /// Its place in its lane (a ``DeadlineQueue``).
    var laneLink = DeadlineQueueLink<DeadlineWaiter>()

    /// The lanes' link of a waiter.
    enum LaneLinkage: DeadlineQueueLinkage {
        static func withLink<Result>(
            of waiter: DeadlineWaiter, _ body: (inout DeadlineQueueLink<DeadlineWaiter>) -> Result
        ) -> Result {
            body(&waiter.laneLink)
        }
    }

    public init() {}

    /// The deadline passed: called on the loop, once, after the waiter left its lane (or timer).
    open func deadlinePassed() {}

    /// Whether the waiter waits for a deadline (started, not passed, not cancelled).
    public var waitsForDeadline: Bool {
        if case .none = deadlinePlace { return false }
        return true
    }
}

/// A loop's waiters (``DeadlineWaiter``) in a few FIFO lanes, each in deadline order: a waiter
/// joins the first lane whose newest deadline is not later than its own. Deadlines of one kind
/// come in order (a Send's is its start plus the configured timeout, on the loop's clock), so a
/// kind fills one lane, and joining or leaving is a few pointer writes; which one passes next is
/// the oldest of a lane. A waiter that fits no lane (more kinds than lanes, or a deadline earlier
/// than each lane's newest) is the loop's to time otherwise (``append(_:at:)`` returns false).
///
/// A plain value: loop-thread only, tested without a loop.
struct DeadlineLanes: ~Copyable {
    static let laneCount = 4

    private typealias Lane = DeadlineQueue<DeadlineWaiter.LaneLinkage>

    /// Fixed, allocated once: an array's uniqueness and bounds checks on every join and leave.
    private let lanes: UnsafeMutablePointer<Lane>
    private(set) var count = 0

    init() {
        lanes = .allocate(capacity: Self.laneCount)
        lanes.initialize(repeating: Lane(), count: Self.laneCount)
    }

    deinit {
        // The references the lanes still hold.
        for index in 0..<Self.laneCount {
            while let oldest = lanes[index].oldest {
                oldest.deadlinePlace = .none
                lanes[index].remove(oldest)
            }
        }
        lanes.deinitialize(count: Self.laneCount)
        lanes.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// Puts `waiter` (waiting nowhere) in the first lane its deadline fits; false when none fits.
    mutating func append(_ waiter: DeadlineWaiter, at deadline: UInt64) -> Bool {
        for index in 0..<Self.laneCount where lanes[index].accepts(deadline) {
            lanes[index].append(waiter, deadline: deadline)
            waiter.deadlinePlace = .lane(index)
            count += 1
            return true
        }
        return false
    }

    /// Takes `waiter` out of its lane; nothing if it is in none.
    mutating func remove(_ waiter: DeadlineWaiter) {
        guard case .lane(let index) = waiter.deadlinePlace else { return }
        waiter.deadlinePlace = .none
        lanes[index].remove(waiter)
        count -= 1
    }

    /// The earliest deadline of any waiter; nil without waiters.
    var earliestDeadline: UInt64? {
        var earliest: UInt64?
        for index in 0..<Self.laneCount {
            if let deadline = lanes[index].oldestDeadline, deadline < earliest ?? .max { earliest = deadline }
        }
        return earliest
    }

    /// Takes out the waiters whose deadline is at or before `now`, each lane's oldest first.
    mutating func removeDue(now: UInt64) -> [DeadlineWaiter] {
        var due: [DeadlineWaiter] = []
        for index in 0..<Self.laneCount {
            let before = due.count
            lanes[index].removeDue(now: now, into: &due)
            for waiter in due[before...] { waiter.deadlinePlace = .none }
            count -= due.count - before
        }
        return due
    }

    /// Takes every waiter out, none told (the loop is closing; its timers are dropped too).
    mutating func removeAll() {
        for index in 0..<Self.laneCount {
            while let oldest = lanes[index].oldest { remove(oldest) }
        }
    }
}
