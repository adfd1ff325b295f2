import PushCore

/// Everything one server call decides, whatever door it came in by, as a plain value: whether its
/// handler runs and how (a task, an immediate handler waiting for its request, an ordered stream),
/// what the call holds of the request budget, whether its response head is out, whether the client
/// has finished sending, and how it ends: answered, failed, past its deadline, or dropped when the
/// client goes away. Events go in; what the driver must do comes out.
///
/// It knows no framing and no I/O: a driver (``GRPCServerCall`` for gRPC on HTTP/2,
/// ``ConnectCall`` for Connect on HTTP/1.1 and HTTP/2) keeps the handler's objects (its task, its
/// message queue, its cancel action), turns bytes into messages and an ``Ending`` into its own
/// response (trailers, Trailers-Only, a Connect body or end-of-stream message), and reports the
/// call. A call ends once, by ``finish(_:)`` (an answer, a failure, the deadline) or by
/// ``clientGone(detached:)``: after that, events are ignored, so a late answer, a second end or a
/// reset after the end writes and releases nothing, and the budget is given back exactly once.
///
/// Two ways in: a streamed request (gRPC) reserves each message as it is declared
/// (``pendingMessageReserved(_:)``), hands complete ones over (``received(_:reserved:)``) and ends
/// with ``requestEnd(truncated:)``; a request that arrives whole (a Connect body, or any other
/// unary door's, such as a form body answered in XML) starts `.collecting` with the body's
/// reservation (``holdForRequest(_:)``) and hands it to its handler with
/// ``requestHandedOver(to:)``. Both end the same way.
///
/// Kept inline in its driver and mutated in place: no allocation of its own.
struct ServerCallMachine {
    /// How the handler runs.
    enum Stage: Equatable {
        /// Before the call reached its method.
        case unstarted
        /// An immediate unary method waits for its one request message and the client's half-close.
        case collecting
        /// The immediate handler has its request and has not answered yet.
        case answering
        /// A task runs the handler; request messages go to it through a queue the driver keeps.
        case task
        /// Each request message runs a handler on the loop; answers go out in request order.
        case ordered
        /// Stopped.
        case ended
    }

    private(set) var stage = Stage.unstarted
    /// The handler gave its answer (an immediate method's message or status): a cancel action it
    /// registers afterwards is not run.
    private(set) var answerGiven = false
    /// The client finished sending (HTTP/2 END_STREAM, the end of an HTTP/1.1 body).
    private(set) var requestEnded = false
    /// The response head (gRPC's HEADERS, a Connect stream's status line) is out.
    private(set) var headWritten = false
    /// The call reached a method (started or refused by its admission): only such a call is
    /// reported when the client goes away.
    private(set) var reachedMethod = false
    /// A method's admission let it in (a keyed call): it keeps its connection from idling.
    /// Keyless calls (Health) never do, so they cannot hold a connection open for ever.
    private(set) var keepsConnectionBusy = false
    /// The call has a deadline of its own (`grpc-timeout`, `connect-timeout-ms`) to stop when it ends.
    private(set) var hasDeadline = false
    /// The request budget held for the message being assembled (its whole declared size).
    private(set) var pendingReserved = 0
    /// The request budget held for the request kept for the handler (an immediate method's
    /// message, a Connect body), until the handler takes it.
    private(set) var requestReserved = 0
    /// A request being decoded off the loop keeps its reservation until the decoding is over,
    /// whatever happens to the call meanwhile.
    private(set) var decodingOffLoop = false
    /// An immediate method's request message once complete.
    private var request: [UInt8]?
    /// An ordered stream's requests and answers (nil for every other kind of call).
    private(set) var replies: GRPCOrderedReplies?

    var isEnded: Bool { stage == .ended }

    // MARK: Actions

    /// How to stop the call's handler when the call ends.
    struct Stop {
        /// What ran: the driver stops its task and queue (`.task`), runs its cancel action
        /// (`.answering`), or cancels ``cancels`` (`.ordered`).
        var handler: Stage
        /// The work behind the call stops (false: the server dropped the client and the work goes on).
        var cancelsWork: Bool
        /// Request budget bytes to give back now.
        var release: Int
        /// The ordered stream's requests still running: what to cancel (if ``cancelsWork``).
        var cancels: [@Sendable () -> Void]
        /// The call's own deadline is to be stopped.
        var stopsDeadline: Bool
    }

    /// How the call ends on the wire, for the driver to frame.
    struct Ending {
        var stop: Stop
        var status: GRPCStatus
        /// The response head went out before: the end follows messages (gRPC trailers), else it is
        /// the whole response (Trailers-Only, a Connect unary answer).
        var headWritten: Bool
        /// The client is still sending: the stream is reset once the end is out.
        var resetsStream: Bool
    }

    /// What to do with a complete request message.
    enum Delivery {
        /// Kept for the immediate handler (with its reservation) until the request ends.
        case collected
        /// To the handler task's queue, with the budget share it holds until taken.
        case deliver([UInt8], reserved: Int)
        /// Queued among the ordered stream's requests: drive ``nextOrderedAction()``.
        case queued
        /// Nobody reads it: release `release`; if `failure`, the call ends with it.
        case dropped(release: Int, failure: GRPCStatus?)
    }

    /// What the end of the request asks for.
    enum RequestEnd {
        case none
        /// The immediate handler runs with `request`; release `release` (the handler owns it now).
        case runImmediate([UInt8], release: Int)
        /// The handler task's queue ends after what it has.
        case endMessages
        /// The ordered stream has every request: drive ``nextOrderedAction()``.
        case drive
        /// The call ends with this failure (``finish(_:)``).
        case fail(GRPCStatus)
    }

    /// What to do with a cancel action an immediate handler registers.
    enum CancelRegistration {
        /// Keep it: run it if the call ends before the answer (a ``Stop`` of an `.answering`
        /// handler that ``Stop/cancelsWork``).
        case keep
        /// The call already ended unanswered: run it now.
        case runNow
        /// The call was answered: it never runs.
        case ignore
    }

    // MARK: Admission and start

    /// A method's admission let the call in (a keyed call). Returns whether the connection now
    /// counts it busy.
    mutating func admitted() -> Bool {
        guard !isEnded, !keepsConnectionBusy else { return false }
        keepsConnectionBusy = true
        return true
    }

    /// The connection lets the call go. Returns whether it counted it busy (once).
    mutating func leftConnection() -> Bool {
        defer { keepsConnectionBusy = false }
        return keepsConnectionBusy
    }

    /// The call reached its method and its handler is ready to run as `stage` (`.collecting`,
    /// `.task`, `.ordered`; ordered streams run at most `window` requests at once).
    mutating func start(_ stage: Stage, deadline: Bool, window: Int = 1) {
        reachedMethod = true
        guard !isEnded else { return }
        hasDeadline = deadline
        self.stage = stage
        if stage == .ordered { replies = GRPCOrderedReplies(window: window) }
    }

    /// The call's method refused it at the head (its admission, a bad request): it ends with `status`.
    mutating func refused(_ status: GRPCStatus) -> Ending? {
        reachedMethod = true
        return finish(status)
    }

    // MARK: The request

    /// The client declared a message whose whole size the call reserved in the budget.
    mutating func pendingMessageReserved(_ bytes: Int) {
        pendingReserved += bytes
    }

    /// The message being assembled is complete: its reservation, which goes with it from here.
    mutating func takePendingReservation() -> Int {
        defer { pendingReserved = 0 }
        return pendingReserved
    }

    /// The call holds `bytes` of the budget for its request (a Connect body reserved at its head).
    mutating func holdForRequest(_ bytes: Int) {
        requestReserved += bytes
    }

    /// The request's reservation, taken out to be adjusted (inflating) and put back with
    /// ``holdForRequest(_:)``, or released by the taker.
    mutating func takeRequestReservation() -> Int {
        defer { requestReserved = 0 }
        return requestReserved
    }

    /// A complete request message holding `reserved` bytes of the budget.
    mutating func received(_ message: [UInt8], reserved: Int) -> Delivery {
        switch stage {
        case .collecting where request == nil:
            request = message
            requestReserved += reserved
            return .collected
        case .collecting:
            return .dropped(
                release: reserved,
                failure: GRPCStatus(.invalidArgument, "the method takes one request message; the client sent more"))
        case .task:
            return .deliver(message, reserved: reserved)
        case .ordered:
            replies?.received(message, reserved: reserved)
            return .queued
        case .unstarted, .answering, .ended:
            // Nobody reads it: an immediate handler has its request already.
            return .dropped(release: reserved, failure: nil)
        }
    }

    /// The client finished sending; `truncated`: inside a message.
    mutating func requestEnd(truncated: Bool) -> RequestEnd {
        requestEnded = true
        guard !isEnded else { return .none }
        if truncated {
            return .fail(
                GRPCStatus(.invalidArgument, "the request ended inside a message (truncated length-prefixed message)"))
        }
        switch stage {
        case .collecting:
            guard let request else {
                return .fail(GRPCStatus(.invalidArgument, "the call ended without a request message"))
            }
            self.request = nil
            stage = .answering
            return .runImmediate(request, release: takeRequestReservation())
        case .task:
            // The stage stays: a call that ends before its handler took every message must still
            // give their reservations back (the driver cancels the queue).
            return .endMessages
        case .ordered:
            replies?.clientHalfClosed()
            return .drive
        case .unstarted, .answering, .ended:
            return .none
        }
    }

    /// The request was complete before the handler ran, as a Connect body is: the handler runs as
    /// `stage` (`.answering` for an immediate handler, `.task`). Returns the request's
    /// reservation to release (the handler owns the request from here), nil if the call ended.
    mutating func requestHandedOver(to stage: Stage) -> Int? {
        requestEnded = true
        guard !isEnded else { return nil }
        self.stage = stage
        return takeRequestReservation()
    }

    /// The request began decoding off the loop; its reservation stays until ``decodedOffLoop()``.
    mutating func decodingBegan() {
        decodingOffLoop = true
    }

    /// The off-loop decoding is over. Returns the reservation to release if the call ended
    /// meanwhile (its end left it for now), else nil (the call goes on and holds it).
    mutating func decodedOffLoop() -> Int? {
        decodingOffLoop = false
        return isEnded ? takeRequestReservation() : nil
    }

    /// The request was not complete within the connection's request time limit.
    mutating func requestTimeExceeded(_ limit: Duration) -> Ending? {
        guard !requestEnded else { return nil }
        return finish(GRPCStatus(.deadlineExceeded, "the request was not completed within \(limit) (request_timeout)"))
    }

    // MARK: Answers

    /// A response message goes out (a streaming answer). Returns whether the head goes first, nil
    /// once the call ended (the message is dropped).
    mutating func messageWritten() -> Bool? {
        guard !isEnded else { return nil }
        defer { headWritten = true }
        return !headWritten
    }

    /// The immediate handler answered with its message: the call ends OK, the message going out
    /// with the end.
    mutating func answered() -> Ending? {
        guard !isEnded else { return nil }
        answerGiven = true
        return finish(.ok)
    }

    /// The immediate handler answered with a failure: the call ends with it.
    mutating func answered(failing status: GRPCStatus) -> Ending? {
        guard !isEnded else { return nil }
        answerGiven = true
        return finish(status)
    }

    /// The immediate handler registers what to do if the call ends before its answer (a handler
    /// may answer before it registers).
    func cancelActionRegistered() -> CancelRegistration {
        switch stage {
        case .answering: .keep
        case .ended: answerGiven ? .ignore : .runNow
        case .unstarted, .collecting, .task, .ordered: .ignore  // no immediate handler has been called
        }
    }

    // MARK: Ordered streams

    /// Request `slot`'s answer (ignored once answered or after the end).
    mutating func orderedAnswered(_ slot: Int, _ answer: GRPCOrderedReplies.Answer) {
        replies?.answered(slot, answer)
    }

    /// Request `slot`'s cancel action; true when it must run now (the call ended first).
    mutating func orderedCancelRegistered(_ slot: Int, _ action: @escaping @Sendable () -> Void) -> Bool {
        replies?.setCancel(slot, action) == true
    }

    /// What the ordered stream does next, until nil (``GRPCOrderedReplies/nextAction()``).
    mutating func nextOrderedAction() -> GRPCOrderedReplies.Action? {
        guard !isEnded else { return nil }
        return replies?.nextAction()
    }

    /// The client has this stream's answers backed up: no request runs until they drain.
    var orderedOutputBlocked: Bool {
        get { replies?.outputBlocked ?? false }
        set { replies?.outputBlocked = newValue }
    }

    /// Ordered requests wait for a slot (their bytes hold back the client's flow-control window).
    var orderedBacklogged: Bool { replies?.isBacklogged ?? false }

    // MARK: Ending

    /// The call ends with `status` (its handler returned or failed, its deadline passed, a
    /// request was refused). nil if it already ended.
    mutating func finish(_ status: GRPCStatus) -> Ending? {
        guard let stop = stop(cancellingWork: true) else { return nil }
        let ending = Ending(stop: stop, status: status, headWritten: headWritten, resetsStream: !requestEnded)
        headWritten = true
        return ending
    }

    /// The call's own deadline passed.
    mutating func deadlineReached() -> Ending? {
        hasDeadline = false  // it fired: nothing to stop
        return finish(GRPCStatus(.deadlineExceeded, "the deadline passed before the call finished"))
    }

    /// The client went away (reset, connection closed): the call stops without an answer.
    /// `detached`: the server dropped the client; the work goes on without it. Returns the stop,
    /// and whether the call is reported (it reached a method); nil if it already ended.
    mutating func clientGone(detached: Bool = false) -> (stop: Stop, reports: Bool)? {
        guard let stop = stop(cancellingWork: !detached) else { return nil }
        return (stop, reachedMethod)
    }

    private mutating func stop(cancellingWork: Bool) -> Stop? {
        guard !isEnded else { return nil }
        let handler = stage
        stage = .ended
        var release = pendingReserved
        pendingReserved = 0
        if !decodingOffLoop { release += takeRequestReservation() }  // else when the decoding is over
        request = nil
        var cancels: [@Sendable () -> Void] = []
        if handler == .ordered, let ended = replies?.end() {
            cancels = ended.cancels
            release += ended.reserved
        }
        // An immediate handler's answer that ended the call: nothing left to cancel.
        let stop = Stop(
            handler: handler, cancelsWork: cancellingWork && !(handler == .answering && answerGiven), release: release,
            cancels: cancels, stopsDeadline: hasDeadline)
        hasDeadline = false
        return stop
    }
}
