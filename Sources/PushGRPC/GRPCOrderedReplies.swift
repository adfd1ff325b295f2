import PushCore

/// The state of a call whose request messages are each answered by one response, in request
/// order (``GRPCMethod/orderedStream(_:window:_:)``): at most `window` requests run at once, the
/// rest wait (and their bytes hold back the client's flow-control window); an answer goes out once
/// every answer before it has; a failed request ends the call when its turn comes, after the
/// answers before it.
///
/// A plain value, events in and actions out: the call feeds it what happens and then performs
/// ``nextAction()`` until it returns nil.
struct GRPCOrderedReplies {
    enum Answer {
        case message([UInt8])
        case failure(GRPCStatus)
    }

    enum Action {
        /// Run the handler for request `index`; `reserved`: its share of the request budget.
        case dispatch(index: Int, request: [UInt8], reserved: Int)
        case send([UInt8])
        /// The call ends with this status; ``end()`` gives what to cancel.
        case finish(GRPCStatus)
    }

    private enum Slot {
        case running(cancel: (@Sendable () -> Void)?)
        case done(Answer)
    }

    let window: Int
    /// Requests received and not dispatched yet, from `waitingHead` on.
    private var waiting: [(request: [UInt8], reserved: Int)] = []
    private var waitingHead = 0
    /// Requests dispatched and not yet answered out, oldest (index `firstOpen`) first.
    private var slots: [Slot] = []
    private var firstOpen = 0
    private var halfClosed = false
    /// No request is dispatched while the client has this many response bytes unread.
    var outputBlocked = false
    private(set) var ended = false
    /// ``nextAction()`` said `.finish`: it says nothing more.
    private var finishing = false

    init(window: Int) {
        self.window = max(1, window)
        slots.reserveCapacity(self.window)
    }

    /// Requests wait for a free slot.
    var isBacklogged: Bool { waitingHead < waiting.count }

    mutating func received(_ request: [UInt8], reserved: Int) {
        waiting.append((request, reserved))
    }

    mutating func clientHalfClosed() {
        halfClosed = true
    }

    /// Request `index`'s answer; ignored once answered or after the end.
    mutating func answered(_ index: Int, _ answer: Answer) {
        let position = index - firstOpen
        guard !ended, position >= 0, position < slots.count, case .running = slots[position] else { return }
        slots[position] = .done(answer)
    }

    /// How to cancel request `index`'s work if the call ends first. Returns true when that must
    /// happen now: the call has ended and the request was not answered out.
    mutating func setCancel(_ index: Int, _ cancel: @escaping @Sendable () -> Void) -> Bool {
        let position = index - firstOpen
        if ended { return position >= 0 }
        guard position >= 0, position < slots.count, case .running = slots[position] else { return false }
        slots[position] = .running(cancel: cancel)
        return false
    }

    mutating func nextAction() -> Action? {
        guard !ended, !finishing else { return nil }
        if let first = slots.first, case .done(let answer) = first {
            switch answer {
            case .message(let message):
                slots.removeFirst()
                firstOpen += 1
                return .send(message)
            case .failure(let status):
                finishing = true
                return .finish(status)
            }
        }
        if !outputBlocked, slots.count < window, waitingHead < waiting.count {
            let next = waiting[waitingHead]
            waitingHead += 1
            if waitingHead == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                waitingHead = 0
            }
            slots.append(.running(cancel: nil))
            return .dispatch(index: firstOpen + slots.count - 1, request: next.request, reserved: next.reserved)
        }
        if halfClosed, slots.isEmpty, waitingHead == waiting.count {
            finishing = true
            return .finish(.ok)
        }
        return nil
    }

    /// The call is over: the cancel actions of the requests still running, and the budget share
    /// of those still waiting.
    mutating func end() -> (cancels: [@Sendable () -> Void], reserved: Int) {
        guard !ended else { return ([], 0) }
        ended = true
        var cancels: [@Sendable () -> Void] = []
        for slot in slots {
            if case .running(let cancel?) = slot { cancels.append(cancel) }
        }
        let reserved = waiting[waitingHead...].reduce(0) { $0 + $1.reserved }
        slots.removeAll()
        waiting.removeAll()
        waitingHead = 0
        return (cancels, reserved)
    }
}
