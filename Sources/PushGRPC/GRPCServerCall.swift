import PushCore
import PushHTTP2
import PushPosix

/// The server side of one gRPC call (one HTTP/2 stream): its request deframing, its handler task, its
/// response and its end.
///
/// Confined to the event loop of its connection; the handler task reaches it only through
/// `loop.execute`. That confinement is why it is `@unchecked Sendable`.
final class GRPCServerCall: @unchecked Sendable {
    let loop: EventLoop
    let streamID: Int32
    private unowned let connection: GRPCServerConnection
    private var deframer: GRPCMessageDeframer
    private var requests: GRPCRequestMessages?
    private var task: Task<Void, Never>?
    /// An immediate unary method (no task): its handler until the request is complete, the
    /// request message and the call's context meanwhile, and what to do if the call ends before
    /// the handler answers.
    private var immediateHandler: GRPCImmediateUnaryHandler?
    private var immediateRequest: [UInt8]?
    private var immediateContext: GRPCCallContext?
    private var cancelAction: (@Sendable () -> Void)?
    /// The immediate handler answered (the call did not end by a cancellation).
    private var answered = false
    private var deadlineTimer: TimerID?
    private var requestTimer: TimerID?
    private var responseHeadersSent = false
    private var clientHalfClosed = false
    private(set) var isFinished = false
    /// For ``GRPCCallObserver``: the method's path once started, and when the call began.
    private let observer: (any GRPCCallObserver)?
    private var path: String?
    /// The call's request id (the client's `x-request-id`, or made up), for logs.
    var requestID = ""
    var peer = ""
    private let startedAt: UInt64

    init(connection: GRPCServerConnection, streamID: Int32, maxMessageSize: Int) {
        self.connection = connection
        self.loop = connection.loop
        self.streamID = streamID
        self.deframer = GRPCMessageDeframer(maxMessageSize: maxMessageSize)
        observer = connection.configuration.callObserver
        startedAt = observer == nil ? 0 : connection.loop.now
    }

    /// Starts the deadline timer, and the handler: in a task now, or (an immediate unary method)
    /// on this loop once the request is complete.
    func start(_ method: GRPCMethod, context: GRPCCallContext, timeout: Duration?) {
        path = context.path
        if let timeout {
            deadlineTimer = loop.schedule(after: timeout) { [weak self] in
                self?.deadlineTimer = nil
                self?.finish(GRPCStatus(.deadlineExceeded, "the deadline passed before the call finished"))
            }
        }
        let handler: GRPCHandler
        switch method.body {
        case .immediate(let immediate):
            // Runs once the request is complete (``receiveEnd()``), on this loop.
            immediateHandler = immediate
            immediateContext = context
            return
        case .task(let body):
            handler = body
        }
        let messages = GRPCRequestMessages()
        requests = messages
        let requestStream = GRPCRequestStream(messages: messages)
        let writer = GRPCResponseWriter(call: self)
        // The handler runs on this call's loop (the loop is a TaskExecutor): no hop to the
        // cooperative pool and back for each await, and its writes need no cross-thread handoff.
        task = Task(executorPreference: loop) { [self] in
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
    }

    /// Whether more than `limit` response bytes wait for the client (false once the call ended).
    func isBackedUp(limit: Int) async -> Bool {
        if loop.inEventLoop { return !isFinished && connection.session.queuedBodyBytes(streamID: streamID) > limit }
        return await withCheckedContinuation { continuation in
            loop.execute { [self] in
                continuation.resume(
                    returning: !isFinished && connection.session.queuedBodyBytes(streamID: streamID) > limit)
            }
        }
    }

    /// Ends the call if its request is not complete within `limit` (a stalled client).
    func limitRequestTime(_ limit: Duration) {
        // Cancelled when the request is complete: a timer left for every call would hold a
        // closure and a heap entry per call for the whole limit (30 s by default).
        requestTimer = loop.schedule(after: limit) { [weak self] in
            guard let self else { return }
            requestTimer = nil
            guard !clientHalfClosed, !isFinished else { return }
            finish(GRPCStatus(.deadlineExceeded, "the request was not completed within \(limit) (request_timeout)"))
        }
    }

    /// Request bytes from a DATA frame.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard !isFinished else { return }
        deframer.append(bytes)
        do {
            while let message = try deframer.next() {
                if message.compressed {
                    // Pushgate offers no compression (no zlib among its libraries), so it advertises
                    // `grpc-accept-encoding: identity`; gRPC clients then send uncompressed messages.
                    finish(
                        GRPCStatus(.unimplemented, "compressed messages are not supported; send uncompressed (identity)"))
                    return
                }
                if immediateHandler != nil {
                    guard immediateRequest == nil else {
                        finish(GRPCStatus(.invalidArgument, "the method takes one request message; the client sent more"))
                        return
                    }
                    immediateRequest = message.bytes
                } else {
                    requests?.yield(message.bytes)
                }
            }
        } catch {
            finish(error)
        }
    }

    /// The client half-closed the stream.
    func receiveEnd() {
        clientHalfClosed = true
        if let requestTimer {
            loop.cancelTimer(requestTimer)
            self.requestTimer = nil
        }
        guard !isFinished else { return }
        if deframer.hasPartialMessage {
            finish(GRPCStatus(.invalidArgument, "the request ended inside a message (truncated length-prefixed message)"))
            return
        }
        if let handler = immediateHandler, let context = immediateContext {
            immediateHandler = nil
            immediateContext = nil
            guard let request = immediateRequest else {
                finish(GRPCStatus(.invalidArgument, "the call ended without a request message"))
                return
            }
            immediateRequest = nil
            handler(request, context, GRPCUnaryResponder(call: self))
            return
        }
        requests?.finish()
        requests = nil
    }

    /// An immediate unary method's answer: its message and OK. Ignored once the call ended.
    func answer(_ message: [UInt8]) {
        guard !isFinished else { return }
        answered = true
        cancelAction = nil
        sendMessage(message)
        finish(.ok)
    }

    /// An immediate unary method's failure. Ignored once the call ended.
    func answer(_ status: GRPCStatus) {
        guard !isFinished else { return }
        answered = true
        cancelAction = nil
        finish(status)
    }

    /// What to do if the call ends before an immediate unary method answers; at once if it has
    /// already ended that way, never if it was answered (a handler may answer before registering).
    func setCancelAction(_ action: @escaping @Sendable () -> Void) {
        guard !isFinished else {
            if !answered { action() }
            return
        }
        cancelAction = action
    }

    /// One response message.
    func sendMessage(_ message: [UInt8]) {
        guard !isFinished else { return }
        do {
            try sendResponseHeadersIfNeeded()
            try connection.session.sendData(streamID: streamID, GRPCMessageFramer.frame(message), endStream: false)
        } catch {
            connection.streamFailed(self, error: error)
        }
        connection.flush()
    }

    /// Ends the call with `status`: trailers after messages, or Trailers-Only when none were sent.
    func finish(_ status: GRPCStatus) {
        guard !isFinished else { return }
        isFinished = true
        stopHandler()
        observer?.callFinished(
            GRPCCallSummary(
                path: path, status: status, nanoseconds: loop.now &- startedAt, requestID: requestID, peer: peer))
        let trailers = Self.trailers(for: status)
        do {
            if responseHeadersSent {
                try connection.session.sendTrailers(streamID: streamID, headers: trailers)
                // A client that is still sending (a bidirectional stream that never half-closes)
                // must not keep the call, and so graceful shutdown, waiting.
                if !clientHalfClosed { connection.resetAfterNextFlush(streamID) }
            } else {
                try connection.session.sendResponseHeaders(
                    streamID: streamID, headers: GRPCHeaders.responseHeaders + trailers, endStream: true)
                if !clientHalfClosed {
                    // The client is still sending a request we no longer read (PROTOCOL-HTTP2.md:
                    // trailers before the client's END_STREAM are followed by RST_STREAM NO_ERROR).
                    // Only after the Trailers-Only HEADERS is on the wire, or nghttp2 drops it.
                    connection.resetAfterNextFlush(streamID)
                }
            }
        } catch {
            connection.streamFailed(self, error: error)
        }
        connection.flush()
    }

    /// The stream is gone (client reset, connection closed): stop without answering.
    func cancel() {
        guard !isFinished else { return }
        isFinished = true
        stopHandler()
        if path != nil {
            // Only calls that reached a method: a request that was not gRPC at all is no call.
            observer?.callFinished(
                GRPCCallSummary(
                    path: path, status: GRPCStatus(.cancelled, "the client cancelled the call or went away"),
                    nanoseconds: loop.now &- startedAt, requestID: requestID, peer: peer))
        }
    }

    private func stopHandler() {
        if let deadlineTimer { loop.cancelTimer(deadlineTimer) }
        deadlineTimer = nil
        if let requestTimer { loop.cancelTimer(requestTimer) }
        requestTimer = nil
        requests?.finish()
        requests = nil
        task?.cancel()
        task = nil
        immediateHandler = nil
        immediateContext = nil
        immediateRequest = nil
        if let action = cancelAction {
            cancelAction = nil
            action()
        }
    }

    private func sendResponseHeadersIfNeeded() throws {
        guard !responseHeadersSent else { return }
        responseHeadersSent = true
        try connection.session.sendResponseHeaders(
            streamID: streamID, template: GRPCHeaders.responseHeadersTemplate, endStream: false)
    }

    /// The trailers of nearly every call, made once.
    private static let okTrailers = [HTTP2Header("grpc-status", "0")]

    static func trailers(for status: GRPCStatus) -> [HTTP2Header] {
        if status.code == .ok && status.message.isEmpty { return okTrailers }
        var headers = [HTTP2Header("grpc-status", String(status.code.rawValue))]
        if !status.message.isEmpty {
            headers.append(HTTP2Header("grpc-message", GRPCPercentEncoding.encode(status.message)))
        }
        return headers
    }
}
