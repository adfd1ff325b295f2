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
final class ConnectCall: GRPCCallTarget, @unchecked Sendable {
    let loop: EventLoop
    private weak var exchange: (any ConnectExchange)?
    private let head: ConnectRequestHead
    private let method: GRPCMethod
    private let context: GRPCCallContext
    private let maxMessageSize: Int
    private let budget: GRPCRequestBudget
    private var reserved: Int
    private let observer: (any GRPCCallObserver)?
    private let startedAt: UInt64
    private var deadlineTimer: TimerID?
    private var task: Task<Void, Never>?
    private var messages: GRPCRequestMessages?
    private var cancelAction: (@Sendable () -> Void)?
    /// A unary method's response, until the handler returns OK.
    private var response: [UInt8]?
    private var streamStarted = false
    private(set) var isFinished = false
    private var drainWaiter: (limit: Int, continuation: CheckedContinuation<Void, Never>)?

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
        self.reserved = reserved
        self.observer = observer
        startedAt = loop.now
    }

    /// The request's body is complete (`bodyLength` bytes, of which `body` holds at most the
    /// limit and one more): decodes it and starts the handler.
    func start(body: [UInt8], bodyLength: Int) {
        if let timeout = head.timeout {
            deadlineTimer = loop.schedule(after: timeout) { [weak self] in
                self?.deadlineTimer = nil
                self?.finish(GRPCStatus(.deadlineExceeded, "the deadline passed before the call finished"))
            }
        }
        let message: [UInt8]
        do throws(GRPCStatus) {
            message = try ConnectRequestBody.unwrap(
                body, bodyLength: bodyLength, head: head, maxMessageSize: maxMessageSize, budget: budget,
                reserved: &reserved)
        } catch {
            finish(error)
            return
        }
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
        decodingOffLoop = true
        let loop = self.loop
        Task.detached { [self] in
            let request = Result { () throws(GRPCStatus) in try json.request(message) }
            loop.execute { self.run(request) }
        }
    }

    /// A JSON message is being parsed off the loop.
    private var decodingOffLoop = false

    /// The request message is decoded: the handler runs.
    private func run(_ decoded: Result<[UInt8], GRPCStatus>) {
        decodingOffLoop = false
        guard !isFinished else {
            releaseReservation()
            return
        }
        let request: [UInt8]
        switch decoded {
        case .success(let message): request = message
        case .failure(let error):
            finish(error)
            return
        }
        releaseReservation()
        switch method.body {
        case .immediate(let handler):
            handler(request, context, GRPCUnaryResponder(call: self))
        case .ordered:
            // ConnectDoor answers request-streaming methods 501 at the head; never reached.
            finish(GRPCStatus(.unimplemented, "\(context.path) streams requests: call it over gRPC"))
        case .task(let handler):
            let messages = GRPCRequestMessages()
            messages.yield(request)
            messages.finish()
            self.messages = messages
            let requests = GRPCRequestStream(messages: messages)
            let writer = GRPCResponseWriter(call: self)
            let context = self.context
            task = Task(executorPreference: loop) { [self] in
                let status: GRPCStatus
                do {
                    try await handler(requests, writer, context)
                    status = .ok
                } catch let error as GRPCStatus {
                    status = error
                } catch {
                    status = GRPCStatus(.internalError, "\(error)")
                }
                if loop.inEventLoop {
                    finish(status)
                } else {
                    loop.execute { self.finish(status) }
                }
            }
        }
    }

    private func releaseReservation() {
        budget.release(reserved)
        reserved = 0
    }

    // MARK: GRPCCallTarget (only unary calls answer through it here: ordered streams are gRPC only,
    // so `slot` is always 0)

    func answer(_ message: [UInt8], slot _: Int) {
        guard !isFinished else { return }
        response = message
        finish(.ok)
    }

    /// A Connect unary answer is the bare message: the room for a gRPC prefix is dropped.
    func answer(prefixed message: consuming [UInt8], slot: Int) {
        answer(Array(message[GRPCMessageFramer.prefixSize...]), slot: slot)
    }

    func answer(_ status: GRPCStatus, slot _: Int) {
        finish(status)
    }

    func setCancelAction(_ action: @escaping @Sendable () -> Void, slot _: Int) {
        if isFinished {
            if response == nil { action() }
            return
        }
        cancelAction = action
    }

    func sendMessage(_ message: [UInt8]) {
        guard !isFinished, let exchange else { return }
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
        if !streamStarted {
            streamStarted = true
            exchange.beginStream(headers: responseHeaders(compressedBody: false))
        }
        exchange.sendStream(envelope(encoded), end: false)
    }

    func waitForDrain(limit: Int) async {
        if loop.inEventLoop && !isBackedUp(limit: limit) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute { [self] in
                guard isBackedUp(limit: limit), let exchange else { return continuation.resume() }
                drainWaiter = (limit, continuation)
                exchange.waitForDrain(self)
            }
        }
    }

    private func isBackedUp(limit: Int) -> Bool {
        !isFinished && (exchange?.unsentBytes ?? 0) > limit
    }

    /// After a flush: resumes a handler waiting for its output to drain. Returns whether it still waits.
    func outputFlushed() -> Bool {
        guard let waiter = drainWaiter else { return false }
        guard !isBackedUp(limit: waiter.limit) else { return true }
        drainWaiter = nil
        waiter.continuation.resume()
        return false
    }

    // MARK: Ending

    /// Ends the call with `status`: the unary answer (the message after OK, else the error), or
    /// the stream's end-of-stream message.
    func finish(_ status: GRPCStatus) {
        guard !isFinished else { return }
        isFinished = true
        stop(cancellingWork: false)
        observer?.callFinished(
            GRPCCallSummary(
                path: context.path, status: status, nanoseconds: loop.now &- startedAt,
                requestID: context.requestID, peer: context.peer))
        guard let exchange else { return }
        switch head.shape {
        case .unary:
            var status = status
            if status.code == .ok {
                guard let response else {
                    status = GRPCStatus(.internalError, "the method ended without a response message")
                    return respondError(status, exchange)
                }
                do throws(GRPCStatus) {
                    var body = try encode(response)
                    let compressed = compress(&body)
                    exchange.respond(status: 200, headers: responseHeaders(compressedBody: compressed), body: body)
                } catch {
                    respondError(error, exchange)
                }
                return
            }
            respondError(status, exchange)
        case .streaming:
            if !streamStarted {
                streamStarted = true
                exchange.beginStream(headers: responseHeaders(compressedBody: false))
            }
            exchange.sendStream(ConnectProtocol.endStream(status), end: true)
        }
    }

    /// The client went away (reset, connection closed): stop without answering.
    func cancel() {
        guard !isFinished else { return }
        isFinished = true
        stop(cancellingWork: true)
        observer?.callFinished(
            GRPCCallSummary(
                path: context.path, status: GRPCStatus(.cancelled, "the client cancelled the call or went away"),
                nanoseconds: loop.now &- startedAt, requestID: context.requestID, peer: context.peer))
    }

    private func stop(cancellingWork: Bool) {
        if let deadlineTimer { loop.cancelTimer(deadlineTimer) }
        deadlineTimer = nil
        if !decodingOffLoop { releaseReservation() }  // else when the parse is over (``run``)
        drainWaiter?.continuation.resume()
        drainWaiter = nil
        messages?.cancel()
        if cancellingWork {
            task?.cancel()
            cancelAction?()
        } else if response == nil, let cancelAction {
            // Ended without an answer (deadline): the work behind it may stop.
            cancelAction()
        }
        cancelAction = nil
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

/// A Connect request body made into the binary request message the handlers take, without I/O.
enum ConnectRequestBody {
    /// Checks the size, takes the one envelope of a streaming request, inflates gzip (bounded by
    /// `maxMessageSize` and `budget`, as gRPC's messages are) and turns JSON into binary protobuf.
    ///
    /// - Throws: RESOURCE_EXHAUSTED over the limit (after inflation too); INVALID_ARGUMENT for a
    ///   body that is not one message, or JSON that is not the request (naming the field);
    ///   INTERNAL for gzip that does not inflate or a compressed flag without an encoding;
    ///   UNIMPLEMENTED for JSON on a method served in binary only.
    static func decode(
        _ body: [UInt8], bodyLength: Int, head: ConnectRequestHead, maxMessageSize: Int, json: GRPCJSONTranscoding?,
        budget: GRPCRequestBudget, reserved: inout Int
    ) throws(GRPCStatus) -> [UInt8] {
        let message = try unwrap(
            body, bodyLength: bodyLength, head: head, maxMessageSize: maxMessageSize, budget: budget,
            reserved: &reserved)
        return try transcode(message, head: head, json: json)
    }

    /// The body's one message, out of its envelope and inflated: everything ``decode`` does but JSON.
    static func unwrap(
        _ body: [UInt8], bodyLength: Int, head: ConnectRequestHead, maxMessageSize: Int,
        budget: GRPCRequestBudget, reserved: inout Int
    ) throws(GRPCStatus) -> [UInt8] {
        let envelopeBytes = head.shape == .streaming ? GRPCMessageFramer.prefixSize : 0
        guard bodyLength <= maxMessageSize + envelopeBytes, body.count == bodyLength else {
            throw GRPCStatus(
                .resourceExhausted,
                "the request body of \(bodyLength) bytes is over the limit of \(maxMessageSize) bytes")
        }
        var message = body
        var compressed = head.compression.encoding == .gzip && !body.isEmpty
        if head.shape == .streaming {
            var deframer = GRPCMessageDeframer(maxMessageSize: maxMessageSize)
            body.withUnsafeBytes { deframer.append($0) }
            guard let first = try deframer.next(), deframer.bufferedByteCount == 0 else {
                throw GRPCStatus(
                    .invalidArgument,
                    "the request body is not one enveloped message (this method takes one request message)")
            }
            message = first.bytes
            compressed = first.compressed
        }
        if compressed {
            var compression = head.compression
            if compression.encoding != .gzip {
                throw GRPCStatus(
                    .internalError, "a message has the compressed flag set, but connect-content-encoding is identity")
            }
            compression.encoding = .gzip
            message = try compression.inflate(message, maxSize: maxMessageSize, budget: budget, reserved: &reserved)
        }
        return message
    }

    /// A JSON message turned into binary protobuf; a binary one as it is.
    static func transcode(
        _ message: [UInt8], head: ConnectRequestHead, json: GRPCJSONTranscoding?
    ) throws(GRPCStatus) -> [UInt8] {
        guard head.codec == .json else { return message }
        guard let json else {
            throw GRPCStatus(.unimplemented, "\(head.path) is served as application/proto only")
        }
        return try json.request(message)
    }
}
