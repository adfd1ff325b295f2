import PushCore
import PushHTTP2
import PushPosix

/// The server side of one gRPC call (one HTTP/2 stream): its request deframing, its handler task, its
/// response and its end.
///
/// Confined to the event loop of its connection; the handler task reaches it only through
/// `loop.execute`. That confinement is why it is `@unchecked Sendable`.
///
/// In two files: the request side here, the answers (messages, the end, cancellation, headers
/// and trailers) in GRPCServerCall+Answers.swift; the state both use is module-internal for that,
/// and only the call's own code changes it.
final class GRPCServerCall: DeadlineWaiter, @unchecked Sendable {
    let loop: EventLoop
    let streamID: Int32
    unowned let connection: GRPCServerConnection
    private var deframer: GRPCMessageDeframer
    /// How the handler runs: see ``Mode``.
    var mode = Mode.unstarted
    /// The connection's request budget, and the share of it this call holds for the message being
    /// assembled (its whole declared size, from its prefix on) and for an immediate method's request.
    let budget: GRPCRequestBudget
    var reservedForPending = 0
    var reservedForRequest = 0
    /// Request bytes received while the handler had messages waiting and not yet returned to the
    /// stream's flow-control window: a client that sends faster than its handler reads is slowed
    /// to the handler's pace instead of filling memory.
    var heldStreamBytes = 0
    var responseHeadersSent = false
    /// The call's `grpc-encoding` and whether its client takes gzip answers (from its headers).
    var compression = GRPCCompression()
    var clientHalfClosed = false
    var isFinished = false
    /// A handler waiting in ``GRPCResponseWriter/send(_:)`` for the client to take response bytes.
    var drainWaiter: DrainWaiter?
    /// For ``GRPCCallObserver`` (the connection's, not a copy per call): the method's path once
    /// started, and when the call began.
    var observer: (any GRPCCallObserver)? { connection.callObserver }
    private(set) var path: String?
    /// The method's ``GRPCRoute/index`` once started (``GRPCCallSummary/methodIndex``).
    var methodIndex: Int?
    /// Counted among the connection's busy calls (see ``GRPCServerConnection``'s idle timeout).
    var keepsConnectionBusy = false
    /// The call's request id (the client's `x-request-id`, or made up), for logs.
    var requestID = GRPCCallRequestID.given("")
    var peer = ""
    /// When the call began (its HEADERS arrived), loop time: read once, for its metrics and for
    /// its deadlines (`grpc-timeout`, the request's time limit), a clock read each before.
    let startedAt: UInt64

    /// The handler's life, one case at a time: a task of its own, or (an immediate unary method)
    /// a request being collected, then a handler that has it and has not answered yet.
    enum Mode {
        /// Before ``start(_:context:timeout:)``.
        case unstarted
        /// A task runs the handler; request messages go to it through `messages`.
        case task(Task<Void, Never>, messages: GRPCRequestMessages)
        /// An immediate unary method waits for its one request message (nil until it is complete;
        /// its reservation is ``reservedForRequest``) and the client's half-close.
        case collecting(GRPCImmediateUnaryHandler)
        /// The immediate handler has the request; `cancel` is what to do if the call ends before
        /// it answers.
        case answering(cancel: (@Sendable () -> Void)?)
        /// An ordered stream: each request message runs its handler on this loop, the answers go
        /// out in request order (``replies``).
        case ordered(GRPCOrderedStreamHandler)
        /// Stopped; `answered`: an immediate handler answered (the call did not end by a cancellation).
        case ended(answered: Bool)
    }

    /// A handler waiting for its response bytes to drain. A class: every call has the optional
    /// field and few ever wait, and an optional tuple holding a continuation (a type of another
    /// module, of unknown layout) was set to nil and destroyed through type metadata per call.
    final class DrainWaiter {
        let limit: Int
        let continuation: CheckedContinuation<Void, Never>

        init(limit: Int, continuation: CheckedContinuation<Void, Never>) {
            self.limit = limit
            self.continuation = continuation
        }
    }

    /// An ordered stream's requests and answers (nil for every other kind of call).
    var replies: GRPCOrderedReplies?
    /// An immediate or ordered method's context, and an immediate unary method's request once
    /// complete: kept out of ``Mode``, whose every `switch` would otherwise copy them (a retain and
    /// a release per field of the context).
    private var context: GRPCCallContext?
    private var immediateRequest: [UInt8]?

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
        finish(GRPCStatus(.deadlineExceeded, "the deadline passed before the call finished"))
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
        let handler: GRPCHandler
        switch route.method.body {
        case .immediate(let immediate):
            // Runs once the request is complete (``receiveEnd()``), on this loop.
            mode = .collecting(immediate)
            self.context = context
            return
        case .ordered(let window, let perMessage):
            mode = .ordered(perMessage)
            self.context = context
            replies = GRPCOrderedReplies(window: window)
            return
        case .task(let body):
            handler = body
        }
        let messages = GRPCRequestMessages(budget: budget) { [weak self] in
            guard let self else { return }
            if loop.inEventLoop {
                returnHeldStreamBytes()
            } else {
                loop.execute { self.returnHeldStreamBytes() }
            }
        }
        let requestStream = GRPCRequestStream(messages: messages)
        let writer = GRPCResponseWriter(call: self)
        // The handler runs on this call's loop (the loop is a TaskExecutor): no hop to the
        // cooperative pool and back for each await, and its writes need no cross-thread handoff.
        let task = Task(executorPreference: loop) { [self] in
            let status: GRPCStatus
            do {
                try await handler(requestStream, writer, context)
                status = .ok
            } catch let error as GRPCStatus {
                status = error
            } catch {
                status = GRPCStatus(.internalError, "\(error)")
            }
            if loop.inEventLoop {
                // Usually so (the task prefers this loop): the trailers join this turn's flush, in
                // the same write as the last message, instead of a turn, a write and a client
                // wake-up of their own.
                self.finish(status)
            } else {
                loop.execute { self.finish(status) }
            }
        }
        // Unless the task already ended the call (it may run at once on this loop).
        if !isFinished { mode = .task(task, messages: messages) }
    }

    /// Ends a call its method's admission refused, before any of its request was read.
    func refuse(path: String, _ status: GRPCStatus) {
        self.path = path
        finish(status)
    }

    /// Returns once at most `limit` response bytes of this call wait for the client, or the call
    /// has ended. A wait that cannot end at once is parked on the connection, which looks again
    /// after each of its flushes (``outputFlushed()``).
    func waitForDrain(limit: Int) async {
        if loop.inEventLoop && !isBackedUp(limit: limit) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if loop.inEventLoop {
                parkDrainWaiter(limit: limit, continuation)
            } else {
                loop.execute { [self] in parkDrainWaiter(limit: limit, continuation) }
            }
        }
    }

    private func isBackedUp(limit: Int) -> Bool {
        !isFinished && connection.session.queuedBodyBytes(streamID: streamID) > limit
    }

    private func parkDrainWaiter(limit: Int, _ continuation: CheckedContinuation<Void, Never>) {
        guard isBackedUp(limit: limit) else { return continuation.resume() }
        drainWaiter = DrainWaiter(limit: limit, continuation: continuation)
        connection.waitForDrain(self)
    }

    /// After a flush of the connection: resumes the waiting handler if the call has drained (or
    /// ended). Returns whether it still waits.
    func outputFlushed() -> Bool {
        if replies?.outputBlocked == true {
            guard !isFinished else { return false }
            guard !isBackedUp(limit: GRPCResponseWriter.maxQueuedBytes) else { return true }
            replies?.outputBlocked = false
            driveReplies()
            return replies?.outputBlocked == true
        }
        guard let waiter = drainWaiter else { return false }
        guard !isBackedUp(limit: waiter.limit) else { return true }
        drainWaiter = nil
        waiter.continuation.resume()
        return false
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
        guard !clientHalfClosed, !isFinished else { return }
        finish(GRPCStatus(.deadlineExceeded, "the request was not completed within \(limit) (request_timeout)"))
    }

    /// Request bytes from a DATA frame. Returns whether they may go back to the stream's
    /// flow-control window now; if not, the call keeps count and returns them once its handler has
    /// taken the messages waiting for it.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !isFinished else { return true }
        deframer.append(bytes)
        do {
            while true {
                if reservedForPending == 0, let size = deframer.pendingMessageSize,
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
                        return true
                    }
                    reservedForPending = size
                }
                guard let message = try deframer.next() else { break }
                var reserved = reservedForPending
                reservedForPending = 0
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
                        return true
                    }
                }
                switch mode {
                case .collecting where immediateRequest == nil:
                    immediateRequest = bytes
                    reservedForRequest = reserved
                case .collecting:
                    budget.release(reserved)
                    finish(GRPCStatus(.invalidArgument, "the method takes one request message; the client sent more"))
                    return true
                case .task(_, let messages):
                    connection.workBegan(self)
                    messages.yield(bytes, reserved: reserved)
                case .ordered:
                    replies?.received(bytes, reserved: reserved)
                case .unstarted, .answering, .ended:
                    budget.release(reserved)  // nobody reads it: an immediate handler has its request already
                }
            }
        } catch {
            finish(error)
            return true
        }
        let backlogged: Bool
        switch mode {
        case .task(_, let messages): backlogged = messages.isBacklogged
        case .ordered:
            driveReplies()
            backlogged = replies?.isBacklogged ?? false
        default: backlogged = false
        }
        guard backlogged, !isFinished else { return true }
        heldStreamBytes += bytes.count
        return false
    }

    /// Performs what an ordered stream's state says, until it says nothing more: handlers run for
    /// the requests that have a slot, answers go out in order, the call ends.
    func driveReplies() {
        while !isFinished, let action = replies?.nextAction() {
            switch action {
            case .dispatch(let index, let request, let reserved):
                guard case .ordered(let handler) = mode, let context else { return }
                // The handler owns the request from here, as an immediate unary handler does.
                budget.release(reserved)
                connection.workBegan(self)
                handler(request, context, GRPCUnaryResponder(call: self, slot: index))
            case .send(let framed):
                sendFramed(framed)
                if !isFinished, isBackedUp(limit: GRPCResponseWriter.maxQueuedBytes) {
                    // A client that does not read gets no more requests run until it does.
                    replies?.outputBlocked = true
                    connection.waitForDrain(self)
                }
            case .finish(let status):
                finish(status)
            }
        }
        if replies?.isBacklogged == false { returnHeldStreamBytes() }
    }

    /// The handler has taken every waiting message: the client may send at full speed again.
    private func returnHeldStreamBytes() {
        guard heldStreamBytes > 0 else { return }
        if !isFinished { connection.session.consumeStream(streamID, bytes: heldStreamBytes) }
        heldStreamBytes = 0
        connection.flush()
    }

    /// The client half-closed the stream.
    func receiveEnd() {
        let connection = self.connection
        clientHalfClosed = true
        if requestLink.isQueued { connection.requestCompleted(self) }
        guard !isFinished else { return }
        if deframer.hasPartialMessage {
            finish(
                GRPCStatus(.invalidArgument, "the request ended inside a message (truncated length-prefixed message)"))
            return
        }
        switch mode {
        case .collecting(let handler):
            guard let request = immediateRequest, let context else {
                finish(GRPCStatus(.invalidArgument, "the call ended without a request message"))
                return
            }
            mode = .answering(cancel: nil)
            immediateRequest = nil
            // The handler owns the request from here; what it keeps is bounded by its own limits.
            budget.release(reservedForRequest)
            reservedForRequest = 0
            connection.workBegan(self)
            handler(request, context, GRPCUnaryResponder(call: self))
        case .task(_, let messages):
            // The mode stays: a call that ends before its handler took every message must still
            // give their reservations back (``stopHandler``).
            messages.finish()
        case .ordered:
            replies?.clientHalfClosed()
            driveReplies()
        case .unstarted, .answering, .ended:
            break
        }
    }
}
