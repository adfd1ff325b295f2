import PushCore
import PushHTTP2
import PushPosix

/// The server side of one gRPC call (one HTTP/2 stream): its request deframing, its handler task, its
/// response and its end.
///
/// Confined to the event loop of its connection; the handler task reaches it only through
/// `loop.execute`. That confinement is why it is `@unchecked Sendable`.
///
/// A driver of ``ServerCallMachine``, which decides the call's lifecycle; this turns HTTP/2 DATA
/// into gRPC messages and the machine's endings into HEADERS, DATA and trailers. In two files: the
/// request side here, the answers (messages, the end, cancellation, headers and trailers) in
/// GRPCServerCall+Answers.swift; the state both use is module-internal for that, and only the
/// call's own code changes it.
final class GRPCServerCall: DeadlineWaiter, @unchecked Sendable {
    let loop: EventLoop
    let streamID: Int32
    unowned let connection: GRPCServerConnection
    private var deframer: GRPCMessageDeframer
    /// The call's lifecycle: its stage, its share of the request budget, its end.
    var machine = ServerCallMachine()
    /// What runs the handler: see ``Handler``.
    var handler = Handler.none
    /// The connection's request budget, of which the call holds what ``machine`` counts.
    let budget: GRPCRequestBudget
    /// Request bytes received while the handler had messages waiting and not yet returned to the
    /// stream's flow-control window: a client that sends faster than its handler reads is slowed
    /// to the handler's pace instead of filling memory.
    var heldStreamBytes = 0
    /// The call's `grpc-encoding` and whether its client takes gzip answers (from its headers).
    var compression = GRPCCompression()
    /// A handler waiting in ``GRPCResponseWriter/send(_:)`` for the client to take response bytes.
    var drainWait = GRPCDrainWait()
    /// An immediate handler's action for a call that ends before its answer.
    var cancelAction: (@Sendable () -> Void)?
    /// For the connection's ``GRPCCallObserver``: the method's path once started.
    private(set) var path: String?
    /// The method's ``GRPCRoute/index`` once started (``GRPCCallSummary/methodIndex``).
    var methodIndex: Int?
    /// The call's request id (the client's `x-request-id`, or made up), for logs.
    var requestID = GRPCCallRequestID.given("")
    var peer = ""
    /// When the call began (its HEADERS arrived), loop time: read once, for its metrics and for
    /// its deadlines (`grpc-timeout`, the request's time limit), a clock read each before.
    let startedAt: UInt64

    /// The handler's objects, by the kind of method (the machine's ``ServerCallMachine/Stage``
    /// says where it is in its life).
    enum Handler {
        case none
        /// A task runs the handler; request messages go to it through `messages`.
        case task(Task<Void, Never>, messages: GRPCRequestMessages)
        /// An immediate unary method, called once its request is complete.
        case immediate(GRPCImmediateUnaryHandler, GRPCCallContext)
        /// An ordered stream: each request message runs its handler on this loop.
        case ordered(GRPCOrderedStreamHandler, GRPCCallContext)
    }

    init(connection: GRPCServerConnection, streamID: Int32, maxMessageSize: Int, budget: GRPCRequestBudget) {
        self.connection = connection
        self.loop = connection.loop
        self.streamID = streamID
        self.deframer = GRPCMessageDeframer(maxMessageSize: maxMessageSize)
        self.budget = budget
        startedAt = connection.loop.now
        super.init()
    }

    /// The client's deadline (`grpc-timeout`) passed before the call finished.
    override func deadlinePassed() {
        if let ending = machine.deadlineReached() { end(ending) }
    }

    /// Starts the call's deadline (``deadlinePassed()``), and the handler: in a task now, or (an
    /// immediate unary method) on this loop once the request is complete.
    func start(_ route: GRPCRoute, context: GRPCCallContext, timeout: Duration?) {
        path = route.path
        methodIndex = route.index
        if let limit = route.method.maxRequestMessageSize, limit < deframer.maxMessageSize {
            deframer = GRPCMessageDeframer(maxMessageSize: limit)
        }
        if let timeout {
            // In the loop's deadline lanes, not a timer (a timer's closure, slot and cancelling per
            // call); the call's end cancels it (``deadlinePassed()``).
            loop.startDeadline(self, at: MonotonicDeadline.after(timeout, from: startedAt))
        }
        let body: GRPCHandler
        switch route.method.body {
        case .immediate(let immediate):
            // Runs once the request is complete (``receiveEnd()``), on this loop.
            machine.start(.collecting, deadline: timeout != nil)
            handler = .immediate(immediate, context)
            return
        case .ordered(let window, let perMessage):
            machine.start(.ordered, deadline: timeout != nil, window: window)
            handler = .ordered(perMessage, context)
            return
        case .task(let task):
            body = task
        }
        machine.start(.task, deadline: timeout != nil)
        let messages = GRPCRequestMessages(budget: budget) { [weak self] in
            guard let self else { return }
            if loop.inEventLoop {
                returnHeldStreamBytes()
            } else {
                loop.execute { self.returnHeldStreamBytes() }
            }
        }
        let task = runHandler(body, requests: GRPCRequestStream(messages: messages), context: context)
        // Unless the task already ended the call (it may run at once on this loop).
        if !machine.isEnded { handler = .task(task, messages: messages) }
    }

    /// Ends a call its method's admission refused, before any of its request was read.
    func refuse(path: String, _ status: GRPCStatus) {
        self.path = path
        if let ending = machine.refused(status) { end(ending) }
    }

    func isBackedUp(limit: Int) -> Bool {
        !machine.isEnded && connection.session.queuedBodyBytes(streamID: streamID) > limit
    }

    /// Parked on the connection, which looks again after each of its flushes (``outputFlushed()``).
    func parkDrainWaiter(limit: Int, _ continuation: CheckedContinuation<Void, Never>) {
        guard isBackedUp(limit: limit) else { return continuation.resume() }
        drainWait.park(limit: limit, continuation)
        connection.waitForDrain(self)
    }

    /// After a flush of the connection: resumes the waiting handler if the call has drained (or
    /// ended). Returns whether it still waits.
    func outputFlushed() -> Bool {
        if machine.orderedOutputBlocked {
            guard !machine.isEnded else { return false }
            guard !isBackedUp(limit: GRPCResponseWriter.maxQueuedBytes) else { return true }
            machine.orderedOutputBlocked = false
            driveReplies()
            return machine.orderedOutputBlocked
        }
        return drainWait.flushed { isBackedUp(limit: $0) }
    }

    /// Ends the call if its request is not complete within `limit` (a stalled client): the
    /// connection keeps it in its request deadlines until then, or until it is complete.
    func limitRequestTime(_ limit: Duration) {
        connection.limitRequestTime(self, limit)
    }

    /// The call's place among its connection's calls waiting for their request.
    var requestLink = DeadlineQueueLink<GRPCServerCall>()

    /// The request deadlines' link of a call (its own `grpc-timeout` waits in its loop's lanes,
    /// through the link it has as a ``DeadlineWaiter``).
    enum RequestLinkage: DeadlineQueueLinkage {
        static func withLink<Result>(
            of call: GRPCServerCall, _ body: (inout DeadlineQueueLink<GRPCServerCall>) -> Result
        ) -> Result {
            body(&call.requestLink)
        }
    }

    /// `limit` passed before the request was complete.
    func requestTimeExceeded(_ limit: Duration) {
        if let ending = machine.requestTimeExceeded(limit) { end(ending) }
    }

    /// Request bytes from a DATA frame. Returns whether they may go back to the stream's
    /// flow-control window now; if not, the call keeps count and returns them once its handler has
    /// taken the messages waiting for it.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !machine.isEnded else { return true }
        deframer.append(bytes)
        do {
            while try receiveMessage() {}
        } catch {
            finish(error)
        }
        guard !machine.isEnded else { return true }
        let backlogged: Bool
        switch handler {
        case .task(_, let messages): backlogged = messages.isBacklogged
        case .ordered:
            driveReplies()
            backlogged = machine.orderedBacklogged
        case .none, .immediate: backlogged = false
        }
        guard backlogged, !machine.isEnded else { return true }
        heldStreamBytes += bytes.count
        return false
    }

    /// Takes the next complete message out of the deframer, if any, to where the machine says.
    /// Returns whether to look for another. Inline in ``receive(_:)``: called apart, it read the
    /// deframer's inlinable getters on a copy of the whole deframer (its buffer retained and
    /// released at each message).
    @inline(__always) private func receiveMessage() throws(GRPCStatus) -> Bool {
        if machine.pendingReserved == 0, let size = deframer.pendingMessageSize,
            size - GRPCMessageFramer.prefixSize <= deframer.maxMessageSize
        {
            // Reserved whole before its body arrives, so what a client declares (and then
            // trickles in) is what counts against the budget.
            if let full = budget.refusal(reserving: size) {
                finish(
                    GRPCStatus(
                        .resourceExhausted,
                        "request messages in progress on \(full.owner) already hold \(full.reserved) of its "
                            + "\(full.limit)-byte request budget; this message of \(size) bytes does not fit "
                            + "(send smaller or fewer messages at once)"))
                connection.requestBudgetExceeded(self)
                return false
            }
            machine.pendingMessageReserved(size)
        }
        guard let message = try deframer.next() else { return false }
        var reserved = machine.takePendingReservation()
        var bytes = message.bytes
        if message.compressed {
            // Only here: identity messages take none of this.
            do throws(GRPCStatus) {
                bytes = try compression.inflate(
                    bytes, maxSize: deframer.maxMessageSize, budget: budget, reserved: &reserved
                ) { connection.requestBudgetExceeded(self) }
            } catch {
                budget.release(reserved)
                finish(error)
                return false
            }
        }
        switch machine.received(bytes, reserved: reserved) {
        case .collected, .queued:
            return true
        case .deliver(let message, let reserved):
            guard case .task(_, let messages) = handler else {
                budget.release(reserved)
                return true
            }
            connection.workBegan(self)
            messages.yield(message, reserved: reserved)
            return true
        case .dropped(let release, let failure):
            budget.release(release)
            guard let failure else { return true }
            finish(failure)
            return false
        }
    }

    /// Performs what an ordered stream's state says, until it says nothing more: handlers run for
    /// the requests that have a slot, answers go out in order, the call ends.
    func driveReplies() {
        while let action = machine.nextOrderedAction() {
            switch action {
            case .dispatch(let index, let request, let reserved):
                // The handler owns the request from here, as an immediate unary handler does.
                budget.release(reserved)
                guard case .ordered(let perMessage, let context) = handler else { return }
                connection.workBegan(self)
                perMessage(request, context, GRPCUnaryResponder(call: self, slot: index))
            case .send(let framed):
                sendFramed(framed)
                if isBackedUp(limit: GRPCResponseWriter.maxQueuedBytes) {
                    // A client that does not read gets no more requests run until it does.
                    machine.orderedOutputBlocked = true
                    connection.waitForDrain(self)
                }
            case .finish(let status):
                finish(status)
            }
        }
        if machine.replies != nil, !machine.orderedBacklogged { returnHeldStreamBytes() }
    }

    /// The handler has taken every waiting message: the client may send at full speed again.
    private func returnHeldStreamBytes() {
        guard heldStreamBytes > 0 else { return }
        if !machine.isEnded { connection.session.consumeStream(streamID, bytes: heldStreamBytes) }
        heldStreamBytes = 0
        connection.flush()
    }

    /// The client half-closed the stream.
    func receiveEnd() {
        let connection = self.connection
        let end = machine.requestEnd(truncated: deframer.hasPartialMessage)
        if requestLink.isQueued { connection.requestCompleted(self) }
        switch end {
        case .none:
            break
        case .fail(let status):
            finish(status)
        case .runImmediate(let request, let release):
            // The handler owns the request from here; what it keeps is bounded by its own limits.
            budget.release(release)
            guard case .immediate(let immediate, let context) = handler else {
                return finish(GRPCStatus(.internalError, "the call has no handler for its request"))
            }
            connection.workBegan(self)
            immediate(request, context, GRPCUnaryResponder(call: self))
        case .endMessages:
            if case .task(_, let messages) = handler { messages.finish() }
        case .drive:
            driveReplies()
        }
    }
}
