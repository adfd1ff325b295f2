import PushPosix

/// The calls of one connection whose request must be complete within `request_timeout`, oldest
/// first, with one timer of the connection for them all (a timer, its closure and its cancelling
/// per call cost about a thousand instructions of every unary call).
///
/// Every call of a connection has the same limit, so deadlines come in the order the calls
/// began: the oldest is the next to pass, and the timer is set for it. A call leaves the list the
/// moment its request is complete or it ends (nothing of it is kept until its deadline), which is
/// why the list is linked through the calls themselves (``GRPCServerCall/requestLink``).
struct GRPCRequestDeadlines {
    /// Where a call is in the list: its deadline (loop time), and its neighbours, unmanaged: the
    /// list holds one reference to each call in it (taken when it joins, given back when it
    /// leaves), and relinking retains nothing (``PushPosix/DeadlineLanes`` does the same).
    struct Link {
        var deadline: UInt64 = 0
        var isListed = false
        var newer: Unmanaged<GRPCServerCall>?
        var older: Unmanaged<GRPCServerCall>?
    }

    private var oldestCall: Unmanaged<GRPCServerCall>?
    private var newest: Unmanaged<GRPCServerCall>?

    var isEmpty: Bool { oldestCall == nil }

    /// The call whose deadline is the next to pass.
    var oldest: GRPCServerCall? { oldestCall?.takeUnretainedValue() }

    /// `call` must have its request by `deadline` (never before any call already listed).
    mutating func add(_ call: GRPCServerCall, deadline: UInt64) {
        let joining = Unmanaged.passRetained(call)
        call.requestLink = Link(deadline: deadline, isListed: true, newer: nil, older: newest)
        if let newest {
            newest._withUnsafeGuaranteedRef { $0.requestLink.newer = joining }
        } else {
            oldestCall = joining
        }
        newest = joining
    }

    /// `call` no longer waits for its request (complete, or the call ended); nothing if not listed.
    mutating func remove(_ call: GRPCServerCall) {
        guard call.requestLink.isListed else { return }
        let link = call.requestLink
        call.requestLink = Link()
        if let older = link.older {
            older._withUnsafeGuaranteedRef { $0.requestLink.newer = link.newer }
        } else {
            oldestCall = link.newer
        }
        if let newer = link.newer {
            newer._withUnsafeGuaranteedRef { $0.requestLink.older = link.older }
        } else {
            newest = link.older
        }
        // The list's reference; the caller holds its own.
        Unmanaged.passUnretained(call).release()
    }

    /// Takes out the calls whose deadline is at or before `now`, oldest first.
    mutating func removeDue(now: UInt64) -> [GRPCServerCall] {
        var due: [GRPCServerCall] = []
        while let call = oldest, call.requestLink.deadline <= now {
            remove(call)
            due.append(call)
        }
        return due
    }

    /// Empties the list (the connection closed).
    mutating func removeAll() {
        while let call = oldest { remove(call) }
    }
}
