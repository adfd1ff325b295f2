import PushCore
import Testing

@testable import PushGRPC

/// The call lifecycle every door drives, without sockets, loops or handlers: events in, what the
/// driver must do out.
@Suite("Server call machine: one call's lifecycle as a plain value")
struct ServerCallMachineTests {
    /// An immediate unary call whose one message (holding `reserved` bytes) is complete.
    static func collected(reserved: Int = 10) -> ServerCallMachine {
        var machine = ServerCallMachine()
        machine.start(.collecting, deadline: true)
        machine.pendingMessageReserved(reserved)
        let delivery = machine.received([1, 2, 3], reserved: machine.takePendingReservation())
        guard case .collected = delivery else {
            Issue.record("the first message of an immediate call is kept, got \(delivery)")
            return machine
        }
        return machine
    }

    /// An immediate unary call whose handler has its request and has not answered.
    static func answering() -> ServerCallMachine {
        var machine = collected()
        _ = machine.requestEnd(truncated: false)
        return machine
    }

    /// An ended call ignores every event: nothing more is written, released, cancelled or reported;
    /// a cancel action registered now runs at once unless the handler had `answered`.
    static func expectIgnoresEverything(
        _ machine: inout ServerCallMachine, answered: Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(machine.cancelActionRegistered() == (answered ? .ignore : .runNow), sourceLocation: sourceLocation)
        let answer = machine.answered()
        let failure = machine.answered(failing: GRPCStatus(.internalError, "late"))
        let ending = machine.finish(.ok)
        let deadline = machine.deadlineReached()
        let timedOut = machine.requestTimeExceeded(.seconds(1))
        let gone = machine.clientGone()
        let headFirst = machine.messageWritten()
        let pendingLeft = machine.takePendingReservation()
        let requestLeft = machine.takeRequestReservation()
        #expect(machine.isEnded, sourceLocation: sourceLocation)
        #expect(answer == nil && failure == nil && ending == nil, sourceLocation: sourceLocation)
        #expect(deadline == nil && timedOut == nil && gone == nil, sourceLocation: sourceLocation)
        #expect(headFirst == nil, sourceLocation: sourceLocation)
        #expect(pendingLeft == 0 && requestLeft == 0, sourceLocation: sourceLocation)
    }

    @Test("unary: the request runs the handler once complete, the answer ends the call OK with it")
    func unary() throws {
        var machine = Self.collected(reserved: 10)
        #expect(machine.requestReserved == 10)
        guard case .runImmediate(let request, let release) = machine.requestEnd(truncated: false) else {
            Issue.record("the end of the request runs the handler")
            return
        }
        #expect(request == [1, 2, 3])
        #expect(release == 10)
        #expect(machine.stage == .answering)
        let ending = try required(machine.answered())
        #expect(ending.status.code == .ok)
        #expect(!ending.headWritten)
        #expect(!ending.resetsStream)
        #expect(ending.stop.release == 0)
        #expect(!ending.stop.cancelsWork)
        #expect(ending.stop.stopsDeadline)
        Self.expectIgnoresEverything(&machine, answered: true)
    }

    @Test("streaming: the head goes out before the first message only; the end follows the messages")
    func streaming() throws {
        var machine = ServerCallMachine()
        machine.start(.task, deadline: false)
        guard case .deliver(let message, let reserved) = machine.received([7], reserved: 5) else {
            Issue.record("a task's messages go to its queue")
            return
        }
        #expect(message == [7])
        #expect(reserved == 5)
        let headFirst = machine.messageWritten()
        #expect(headFirst == true)
        let headFirst2 = machine.messageWritten()
        #expect(headFirst2 == false)
        guard case .endMessages = machine.requestEnd(truncated: false) else {
            Issue.record("the end of the request ends the task's queue")
            return
        }
        #expect(machine.stage == .task)
        let ending = try required(machine.finish(.ok))
        #expect(ending.headWritten)
        #expect(!ending.resetsStream)
        #expect(ending.stop.handler == .task)
        #expect(ending.stop.cancelsWork)
        #expect(!ending.stop.stopsDeadline)
        let headFirst3 = machine.messageWritten()
        #expect(headFirst3 == nil)
    }

    @Test("a call that ends while the client still sends resets its stream after the end")
    func endBeforeRequestEnd() throws {
        var machine = ServerCallMachine()
        machine.start(.task, deadline: false)
        let ending = try required(machine.finish(GRPCStatus(.internalError, "x")))
        #expect(ending.resetsStream)
        #expect(!ending.headWritten)
        let requestEnd = machine.requestEnd(truncated: false)
        #expect(requestEnd.isNone)
    }

    @Test("the deadline before the answer ends the call and cancels the handler; the answer is then dropped")
    func deadlineBeforeAnswer() throws {
        var machine = Self.answering()
        let ending = try required(machine.deadlineReached())
        #expect(ending.status.code == .deadlineExceeded)
        #expect(ending.stop.handler == .answering)
        #expect(ending.stop.cancelsWork)
        #expect(!ending.stop.stopsDeadline)  // it fired
        Self.expectIgnoresEverything(&machine, answered: false)
    }

    @Test("the deadline after the answer does nothing")
    func deadlineAfterAnswer() throws {
        var machine = Self.answering()
        let ending = try required(machine.answered(failing: GRPCStatus(.notFound, "no")))
        #expect(ending.status.code == .notFound)
        #expect(ending.stop.stopsDeadline)
        #expect(!ending.stop.cancelsWork)
        Self.expectIgnoresEverything(&machine, answered: true)
    }

    @Test("a client that cancels mid-answer stops the handler; later messages and ends are dropped")
    func cancelMidAnswer() throws {
        var machine = ServerCallMachine()
        machine.start(.task, deadline: true)
        let headFirst = machine.messageWritten()
        #expect(headFirst == true)
        let gone = try required(machine.clientGone())
        #expect(gone.reports)
        #expect(gone.stop.handler == .task)
        #expect(gone.stop.cancelsWork)
        #expect(gone.stop.stopsDeadline)
        Self.expectIgnoresEverything(&machine, answered: false)
    }

    @Test("a client that hangs up while the answer is pending: the answer is dropped, the work cancelled")
    func hangUpWhileAnswerPending() throws {
        var machine = Self.answering()
        #expect(machine.cancelActionRegistered() == .keep)
        let gone = try required(machine.clientGone())
        #expect(gone.stop.handler == .answering)
        #expect(gone.stop.cancelsWork)
        #expect(gone.stop.release == 0)
        Self.expectIgnoresEverything(&machine, answered: false)
    }

    @Test("a client the server dropped: its calls end, their work goes on")
    func detached() throws {
        var machine = Self.answering()
        let gone = try required(machine.clientGone(detached: true))
        #expect(!gone.stop.cancelsWork)
    }

    @Test("a request that never reached a method is not reported when its client goes away")
    func goneBeforeMethod() throws {
        var machine = ServerCallMachine()
        let gone = machine.clientGone()
        #expect(try #require(gone).reports == false)
        var refused = ServerCallMachine()
        let ending = try required(refused.refused(GRPCStatus(.unauthenticated, "no key")))
        #expect(ending.status.code == .unauthenticated)
        #expect(!ending.headWritten)
        #expect(refused.reachedMethod)
    }

    @Test("the request budget is given back exactly once on every path")
    func reservationReleasedOnce() throws {
        // Held for a message being assembled, then the client goes away.
        var pending = ServerCallMachine()
        pending.start(.task, deadline: false)
        pending.pendingMessageReserved(100)
        let gone = pending.clientGone()
        #expect(try #require(gone).stop.release == 100)
        let pendingLeft = pending.takePendingReservation()
        #expect(pendingLeft == 0)

        // A collected request, then the deadline.
        var collected = Self.collected(reserved: 40)
        let deadline = collected.deadlineReached()
        #expect(try #require(deadline).stop.release == 40)
        let requestLeft = collected.takeRequestReservation()
        #expect(requestLeft == 0)

        // A second message for a one-message method: its own share is dropped, the first's at the end.
        var twice = Self.collected(reserved: 40)
        guard case .dropped(let release, let failure) = twice.received([9], reserved: 30) else {
            Issue.record("a second message is refused")
            return
        }
        #expect(release == 30)
        #expect(failure?.code == .invalidArgument)
        let ending = twice.finish(failure!)
        #expect(try #require(ending).stop.release == 40)

        // A Connect body decoded off the loop: kept past the end until the decoding is over.
        var offLoop = ServerCallMachine()
        offLoop.start(.collecting, deadline: false)
        offLoop.holdForRequest(64)
        offLoop.decodingBegan()
        let gone2 = offLoop.clientGone()
        #expect(try #require(gone2).stop.release == 0)
        let decoded = offLoop.decodedOffLoop()
        #expect(decoded == 64)
        let decoded2 = offLoop.decodedOffLoop()
        #expect(decoded2 == 0)

        // Decoded while the call goes on: handed over with the request.
        var handed = ServerCallMachine()
        handed.start(.collecting, deadline: false)
        handed.holdForRequest(64)
        handed.decodingBegan()
        let decoded3 = handed.decodedOffLoop()
        #expect(decoded3 == nil)
        let handedOver = handed.requestHandedOver(to: .answering)
        #expect(handedOver == 64)
        let gone3 = handed.clientGone()
        #expect(try #require(gone3).stop.release == 0)
        let handedOver2 = handed.requestHandedOver(to: .task)
        #expect(handedOver2 == nil)

        // Ordered requests still waiting when the call ends.
        var ordered = ServerCallMachine()
        ordered.start(.ordered, deadline: false, window: 1)
        _ = ordered.received([1], reserved: 5)
        _ = ordered.received([2], reserved: 7)
        guard case .dispatch(_, _, let dispatched) = ordered.nextOrderedAction() else {
            Issue.record("the first request runs")
            return
        }
        #expect(dispatched == 5)
        let gone4 = ordered.clientGone()
        #expect(try #require(gone4).stop.release == 7)
    }

    @Test("keyed calls keep their connection busy, counted once; keyless ones never")
    func busy() {
        var keyed = ServerCallMachine()
        let counted = keyed.admitted()
        #expect(counted)
        let counted2 = keyed.admitted()
        #expect(!counted2)
        #expect(keyed.keepsConnectionBusy)
        let wasCounted = keyed.leftConnection()
        #expect(wasCounted)
        let wasCounted2 = keyed.leftConnection()
        #expect(!wasCounted2)

        var keyless = ServerCallMachine()
        keyless.start(.task, deadline: false)
        #expect(!keyless.keepsConnectionBusy)
        let wasCounted3 = keyless.leftConnection()
        #expect(!wasCounted3)

        var ended = ServerCallMachine()
        _ = ended.finish(.ok)
        let counted3 = ended.admitted()
        #expect(!counted3)
    }

    @Test("ordered stream: at most a window of requests run, answers go out in request order, then OK")
    func ordered() throws {
        var machine = ServerCallMachine()
        machine.start(.ordered, deadline: false, window: 1)
        guard case .queued = machine.received([1], reserved: 0), case .queued = machine.received([2], reserved: 0)
        else {
            Issue.record("an ordered stream queues its requests")
            return
        }
        #expect(machine.orderedBacklogged)
        guard case .dispatch(let first, let request, _) = machine.nextOrderedAction() else {
            Issue.record("the first request runs")
            return
        }
        #expect(first == 0)
        #expect(request == [1])
        #expect(machine.nextOrderedAction() == nil)  // the window is full
        machine.orderedAnswered(first, .message([10]))
        guard case .send(let answer) = machine.nextOrderedAction() else {
            Issue.record("the first answer goes out")
            return
        }
        #expect(answer == [10])
        guard case .dispatch(let second, _, _) = machine.nextOrderedAction() else {
            Issue.record("the second request runs")
            return
        }
        guard case .drive = machine.requestEnd(truncated: false) else {
            Issue.record("the half-close is the ordered stream's to act on")
            return
        }
        #expect(machine.nextOrderedAction() == nil)  // waits for the answer
        machine.orderedAnswered(second, .message([20]))
        guard case .send = machine.nextOrderedAction(), case .finish(let status) = machine.nextOrderedAction() else {
            Issue.record("the second answer, then the end")
            return
        }
        #expect(status.code == .ok)
        let ending = try required(machine.finish(status))
        #expect(ending.stop.handler == .ordered)
        let next = machine.nextOrderedAction()
        #expect(next == nil)
    }

    @Test("an ordered stream that ends with requests running cancels them, and any registered later")
    func orderedCancel() throws {
        var machine = ServerCallMachine()
        machine.start(.ordered, deadline: false, window: 2)
        _ = machine.received([1], reserved: 0)
        _ = machine.received([2], reserved: 0)
        _ = machine.nextOrderedAction()
        _ = machine.nextOrderedAction()
        let runsNow = machine.orderedCancelRegistered(0) {}
        #expect(!runsNow)
        let ending = try required(machine.deadlineReached())
        #expect(ending.stop.cancels.count == 1)
        let runsNow2 = machine.orderedCancelRegistered(1) {}
        #expect(runsNow2)
    }

    @Test("a request cut inside a message, or without one, or slower than the time limit, ends the call")
    func badRequests() throws {
        var truncated = ServerCallMachine()
        truncated.start(.task, deadline: false)
        guard case .fail(let status) = truncated.requestEnd(truncated: true) else {
            Issue.record("a truncated request fails")
            return
        }
        #expect(status.code == .invalidArgument)

        var empty = ServerCallMachine()
        empty.start(.collecting, deadline: false)
        guard case .fail(let missing) = empty.requestEnd(truncated: false) else {
            Issue.record("an immediate call without a request fails")
            return
        }
        #expect(missing.message.contains("without a request message"))

        var slow = ServerCallMachine()
        slow.start(.task, deadline: false)
        let timedOut = slow.requestTimeExceeded(.seconds(5))
        #expect(try #require(timedOut).status.code == .deadlineExceeded)

        var complete = ServerCallMachine()
        complete.start(.task, deadline: false)
        _ = complete.requestEnd(truncated: false)
        let timedOut2 = complete.requestTimeExceeded(.seconds(5))
        #expect(timedOut2 == nil)
    }
}

extension ServerCallMachine.RequestEnd {
    var isNone: Bool {
        if case .none = self { true } else { false }
    }
}

/// `#require` for what a mutating call returned: the macro cannot take the call itself.
private func required<Value>(
    _ value: Value?, sourceLocation: SourceLocation = #_sourceLocation
) throws -> Value {
    try #require(value, sourceLocation: sourceLocation)
}
