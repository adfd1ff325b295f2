/// Something that waits on its event loop for a deadline (``EventLoop/startDeadline(_:at:)``):
/// a Send's collector, answered at its deadline if its results are not all in by then.
///
/// A base class, not a timer per object: a loop timer, its closure, its slot, its heap entry and
/// its cancelling cost ~570 instructions of every 1-token Send, while the waiter's place in its
/// loop's ``DeadlineLanes`` is a few pointers. Loop thread only, like the loop's timers.
open class DeadlineWaiter: @unchecked Sendable {
    /// Where the waiter waits: nowhere, in a lane, or (every lane out of order) as a timer.
    enum Place {
        case none
        case lane(Int)
        case timer(TimerID)
    }

    /// The waiter's deadline and its neighbours in its lane, unmanaged: a lane holds one reference
    /// to each of its waiters (taken when it joins, given back when it leaves), and walking or
    /// relinking a lane retains nothing.
    struct Link {
        var place = Place.none
        var deadline: UInt64 = 0
        var newer: Unmanaged<DeadlineWaiter>?
        var older: Unmanaged<DeadlineWaiter>?
    }

    var deadlineLink = Link()

    public init() {}

    /// The deadline passed: called on the loop, once, after the waiter left its lane (or timer).
    open func deadlinePassed() {}

    /// Whether the waiter waits for a deadline (started, not passed, not cancelled).
    public var waitsForDeadline: Bool {
        if case .none = deadlineLink.place { return false }
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

    private struct Lane {
        var oldest: Unmanaged<DeadlineWaiter>?
        var newest: Unmanaged<DeadlineWaiter>?
    }

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
            var next = lanes[index].oldest
            while let waiter = next {
                next = waiter._withUnsafeGuaranteedRef { $0.deadlineLink.newer }
                waiter._withUnsafeGuaranteedRef { $0.deadlineLink = DeadlineWaiter.Link() }
                waiter.release()
            }
        }
        lanes.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// Puts `waiter` (waiting nowhere) in the first lane its deadline fits; false when none fits.
    mutating func append(_ waiter: DeadlineWaiter, at deadline: UInt64) -> Bool {
        for index in 0..<Self.laneCount {
            let newest = lanes[index].newest
            if let newest, newest._withUnsafeGuaranteedRef({ $0.deadlineLink.deadline }) > deadline { continue }
            let joining = Unmanaged.passRetained(waiter)
            waiter.deadlineLink = DeadlineWaiter.Link(
                place: .lane(index), deadline: deadline, newer: nil, older: newest)
            if let newest {
                newest._withUnsafeGuaranteedRef { $0.deadlineLink.newer = joining }
            } else {
                lanes[index].oldest = joining
            }
            lanes[index].newest = joining
            count += 1
            return true
        }
        return false
    }

    /// Takes `waiter` out of its lane; nothing if it is in none.
    mutating func remove(_ waiter: DeadlineWaiter) {
        guard case .lane(let index) = waiter.deadlineLink.place else { return }
        let link = waiter.deadlineLink
        waiter.deadlineLink = DeadlineWaiter.Link()
        if let older = link.older {
            older._withUnsafeGuaranteedRef { $0.deadlineLink.newer = link.newer }
        } else {
            lanes[index].oldest = link.newer
        }
        if let newer = link.newer {
            newer._withUnsafeGuaranteedRef { $0.deadlineLink.older = link.older }
        } else {
            lanes[index].newest = link.older
        }
        count -= 1
        // The lane's reference; the caller holds its own.
        Unmanaged.passUnretained(waiter).release()
    }

    /// The earliest deadline of any waiter; nil without waiters.
    var earliestDeadline: UInt64? {
        var earliest: UInt64?
        for index in 0..<Self.laneCount {
            if let oldest = lanes[index].oldest {
                let deadline = oldest._withUnsafeGuaranteedRef { $0.deadlineLink.deadline }
                if deadline < earliest ?? .max { earliest = deadline }
            }
        }
        return earliest
    }

    /// Takes out the waiters whose deadline is at or before `now`, each lane's oldest first.
    mutating func removeDue(now: UInt64) -> [DeadlineWaiter] {
        var due: [DeadlineWaiter] = []
        for index in 0..<Self.laneCount {
            while let oldest = lanes[index].oldest?.takeUnretainedValue(), oldest.deadlineLink.deadline <= now {
                remove(oldest)
                due.append(oldest)
            }
        }
        return due
    }

    /// Takes every waiter out, none told (the loop is closing; its timers are dropped too).
    mutating func removeAll() {
        for index in 0..<Self.laneCount {
            while let oldest = lanes[index].oldest?.takeUnretainedValue() { remove(oldest) }
        }
    }
}
