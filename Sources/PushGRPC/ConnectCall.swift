import PushCore
import PushPosix

/// Where a ``ConnectCall`` writes its answer: one HTTP request of a connection, HTTP/1.1 or
/// HTTP/2. Confined to the call's loop.
protocol ConnectExchange: AnyObject {
    /// The whole answer (a unary call's, or any refusal).
    func respond(status: Int, headers: [(name: String, value: String)], body: [UInt8])
    /// Begins a streamed answer: status 200 and `headers`.
    func beginStream(headers: [(name: String, value: String)])
    /// Body bytes of a streamed answer; `end`: the last.
    func sendStream(_ bytes: [UInt8], end: Bool)
    /// Response bytes of this answer the client has not taken yet.
    var unsentBytes: Int { get }
    /// Asks for ``ConnectCall/outputFlushed()`` after each flush until it answers false.
    func waitForDrain(_ call: ConnectCall)
}

/// One Connect call: the request message decoded (gzip, JSON), the method's handler run as the
/// gRPC path runs it, and its answer written as Connect writes it: a bare message or a JSON error
/// with its HTTP status (unary), or envelopes and an end-of-stream message (streaming). The same
/// for both HTTP versions; confined to the connection's loop (hence `@unchecked Sendable`).
///
/// A driver of ``ServerCallMachine``, as ``GRPCServerCall`` is: the lifecycle (the budget held,
/// the handler's stage, the end and what it stops) is the machine's, the framing is this one's.
final class ConnectCall: GRPCCallTarget, @unchecked Sendable {
    let loop: EventLoop
    private weak var exchange: (any ConnectExchange)?
    private let head: ConnectRequestHead
    private let method: GRPCMethod
    private let context: GRPCCallContext
    private let maxMessageSize: Int
    private let budget: GRPCRequestBudget
    private let observer: (any GRPCCallObserver)?
    private let startedAt: UInt64
    private var machine = ServerCallMachine()
    private var deadlineTimer: TimerID?
    private var task: Task<Void, Never>?
    private var messages: GRPCRequestMessages?
    private var cancelAction: (@Sendable () -> Void)?
    /// A unary method's response, until the handler returns OK.
    private var response: [UInt8]?
    private var drainWait = GRPCDrainWait()

    /// - Parameter reserved: bytes of `budget` the driver reserved for the body; released once the
    ///   handler has the request (or the call ends).
    init(
        exchange: any ConnectExchange, loop: EventLoop, head: ConnectRequestHead, method: GRPCMethod,
        context: GRPCCallContext, maxMessageSize: Int, budget: GRPCRequestBudget, reserved: Int,
        observer: (any GRPCCallObserver)?
    ) {
        self.exchange = exchange
        self.loop = loop
        self.head = head
        self.method = method
        self.context = context
        self.maxMessageSize = min(maxMessageSize, method.maxRequestMessageSize ?? .max)
        self.budget = budget
        self.observer = observer
        startedAt = loop.now
        // The method was decided at the head (``ConnectDoor``); its request is the body.
        machine.start(.collecting, deadline: head.timeout != nil)
        machine.holdForRequest(reserved)
    }

    /// The request's body is complete (`bodyLength` bytes, of which `body` holds at most the
    /// limit and one more): decodes it and starts the handler.
    func start(body: [UInt8], bodyLength: Int) {
        if let timeout = head.timeout {
            deadlineTimer = loop.schedule(after: timeout) { [weak self] in
                guard let self else { return }
                deadlineTimer = nil
                if let ending = machine.deadlineReached() { end(ending) }
            }
        }
        var reserved = machine.takeRequestReservation()
        let message: [UInt8]
        do throws(GRPCStatus) {
            message = try ConnectRequestBody.unwrap(
                body, bodyLength: bodyLength, head: head, maxMessageSize: maxMessageSize, budget: budget,
                reserved: &reserved)
        } catch {
            machine.holdForRequest(reserved)
            finish(error)
            return
        }
        machine.holdForRequest(reserved)
        guard head.codec == .json, message.count > RequestDecoding.offLoopBytes, let json = method.json else {
            run(
                Result { () throws(GRPCStatus) in
                    try ConnectRequestBody.transcode(message, head: head, json: method.json)
                })
            return
        }
        // A large JSON message is parsed off the loop (``RequestDecoding``): the loop's other
        // clients are served meanwhile. It keeps its reservation in the request budget until the
        // parse is over, whatever happens to the call (a call that ended meanwhile drops the result),
        // so the budget still bounds what all the parses under way hold.
        machine.decodingBegan()
        let loop = self.loop
        Task.detached { [self] in
            let request = Result { () throws(GRPCStatus) in try json.request(message) }
            loop.execute { self.run(request) }
        }
    }

    /// The request message is decoded: the handler runs.
    private func run(_ decoded: Result<[UInt8], GRPCStatus>) {
        if let release = machine.decodedOffLoop() {
            // The call ended meanwhile.
            budget.release(release)
            return
        }
        let request: [UInt8]
        switch decoded {
        case .success(let message): request = message
        case .failure(let error):
            finish(error)
            return
        }
        switch method.body {
        case .immediate(let handler):
            guard let release = machine.requestHandedOver(to: .answering) else { return }
            budget.release(release)
            handler(request, context, GRPCUnaryResponder(call: self))
        case .ordered:
            // ConnectDoor answers request-streaming methods 501 at the head; never reached.
            finish(GRPCStatus(.unimplemented, "\(context.path) streams requests: call it over gRPC"))
        case .task(let handler):
            guard let release = machine.requestHandedOver(to: .task) else { return }
            budget.release(release)
            let messages = GRPCRequestMessages()
            messages.yield(request)
            messages.finish()
            self.messages = messages
            task = runHandler(handler, requests: GRPCRequestStream(messages: messages), context: context)
        }
    }

    // MARK: GRPCCallTarget (only unary calls answer through it here: ordered streams are gRPC only,
    // so `slot` is always 0)

    func answer(_ message: [UInt8], slot _: Int) {
        guard !machine.isEnded else { return }
        response = message
        if let ending = machine.answered() { end(ending) }
    }

    /// A Connect unary answer is the bare message: the room for a gRPC prefix is dropped.
    func answer(prefixed message: consuming [UInt8], slot: Int) {
        answer(Array(message[GRPCMessageFramer.prefixSize...]), slot: slot)
    }

    func answer(_ status: GRPCStatus, slot _: Int) {
        if let ending = machine.answered(failing: status) { end(ending) }
    }

    func setCancelAction(_ action: @escaping @Sendable () -> Void, slot _: Int) {
        switch machine.cancelActionRegistered() {
        case .keep: cancelAction = action
        case .runNow: action()
        case .ignore: break
        }
    }

    func sendMessage(_ message: [UInt8]) {
        guard !machine.isEnded, let exchange else { return }
        guard head.shape == .streaming else {
            response = message
            return
        }
        let encoded: [UInt8]
        do throws(GRPCStatus) {
            encoded = try encode(message)
        } catch {
            finish(error)
            return
        }
        guard let headFirst = machine.messageWritten() else { return }
        if headFirst { exchange.beginStream(headers: responseHeaders(compressedBody: false)) }
        exchange.sendStream(envelope(encoded), end: false)
    }

    func parkDrainWaiter(limit: Int, _ continuation: CheckedContinuation<Void, Never>) {
        guard isBackedUp(limit: limit), let exchange else { return continuation.resume() }
        drainWait.park(limit: limit, continuation)
        exchange.waitForDrain(self)
    }

    func isBackedUp(limit: Int) -> Bool {
        !machine.isEnded && (exchange?.unsentBytes ?? 0) > limit
    }

    /// After a flush: resumes a handler waiting for its output to drain. Returns whether it still waits.
    func outputFlushed() -> Bool {
        drainWait.flushed { isBackedUp(limit: $0) }
    }

    // MARK: Ending

    /// Ends the call with `status`: the unary answer (the message after OK, else the error), or
    /// the stream's end-of-stream message.
    func finish(_ status: GRPCStatus) {
        if let ending = machine.finish(status) { end(ending) }
    }

    private func end(_ ending: ServerCallMachine.Ending) {
        stop(ending.stop)
        guard let exchange else { return report(ending.status) }
        switch head.shape {
        case .unary:
            answerUnary(ending.status, exchange)
        case .streaming:
            report(ending.status)
            if !ending.headWritten { exchange.beginStream(headers: responseHeaders(compressedBody: false)) }
            exchange.sendStream(ConnectProtocol.endStream(ending.status), end: true)
        }
    }

    /// The unary answer: the message after OK, else the error; reports the status the client gets
    /// (an OK without a message, or one that cannot be encoded, is an error to the client too).
    private func answerUnary(_ status: GRPCStatus, _ exchange: any ConnectExchange) {
        guard status.code == .ok else {
            report(status)
            return respondError(status, exchange)
        }
        guard let response else {
            let missing = GRPCStatus(.internalError, "the method ended without a response message")
            report(missing)
            return respondError(missing, exchange)
        }
        do throws(GRPCStatus) {
            var body = try encode(response)
            let compressed = compress(&body)
            report(status)
            exchange.respond(status: 200, headers: responseHeaders(compressedBody: compressed), body: body)
        } catch {
            report(error)
            respondError(error, exchange)
        }
    }

    /// The client went away (reset, connection closed): stop without answering.
    func cancel() {
        guard let (stop, _) = machine.clientGone() else { return }
        self.stop(stop)
        report(GRPCStatus(.cancelled, "the client cancelled the call or went away"))
    }

    private func report(_ status: GRPCStatus) {
        observer?.callFinished(
            GRPCCallSummary(
                path: context.path, status: status, nanoseconds: loop.now &- startedAt,
                requestID: context.requestID, peer: context.peer))
    }

    /// Does what the machine's stop says: the budget given back (a parse under way keeps its share
    /// until it is over), the deadline stopped, the handler stopped.
    private func stop(_ stop: ServerCallMachine.Stop) {
        if stop.stopsDeadline, let deadlineTimer { loop.cancelTimer(deadlineTimer) }
        deadlineTimer = nil
        budget.release(stop.release)
        drainWait.resume()
        messages?.cancel()
        let cancel = cancelAction
        cancelAction = nil
        guard stop.cancelsWork else { return }
        task?.cancel()
        if stop.handler == .answering, let cancel { cancel() }
    }

    private func respondError(_ status: GRPCStatus, _ exchange: any ConnectExchange) {
        exchange.respond(
            status: ConnectProtocol.httpStatus(status.code), headers: [("content-type", "application/json")],
            body: ConnectProtocol.errorBody(status))
    }

    // MARK: Encoding

    /// A binary response message in the call's codec.
    private func encode(_ message: [UInt8]) throws(GRPCStatus) -> [UInt8] {
        guard head.codec == .json else { return message }
        guard let json = method.json else {
            throw GRPCStatus(.internalError, "the method has no JSON form")
        }
        return try json.response(message)
    }

    /// gzips `body` in place when the client takes gzip and it is worth it; whether it did.
    private func compress(_ body: inout [UInt8]) -> Bool {
        guard head.compression.acceptsGzip, body.count >= GRPCCompression.minCompressedResponseBytes,
            let gzipped = GRPCCompression.gzip(body), gzipped.count < body.count
        else { return false }
        body = gzipped
        return true
    }

    private func envelope(_ message: [UInt8]) -> [UInt8] {
        var body = message
        return compress(&body)
            ? ConnectProtocol.envelope(body, flags: ConnectProtocol.compressedFlag) : ConnectProtocol.envelope(body)
    }

    private func responseHeaders(compressedBody: Bool) -> [(name: String, value: String)] {
        var headers = [("content-type", ConnectProtocol.responseContentType(head.shape, head.codec))]
        switch head.shape {
        case .unary:
            if compressedBody { headers.append(("content-encoding", "gzip")) }
            headers.append(("accept-encoding", GRPCCompression.acceptedEncodings))
        case .streaming:
            if head.compression.acceptsGzip { headers.append(("connect-content-encoding", "gzip")) }
            headers.append(("connect-accept-encoding", GRPCCompression.acceptedEncodings))
        }
        return headers
    }
}
