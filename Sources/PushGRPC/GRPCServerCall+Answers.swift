import PushCore
import PushHTTP2
import PushPosix

// A call's answers: response messages, the end with a status, cancellation, and the response
// headers and trailers.
extension GRPCServerCall {
    /// An immediate unary method's answer: its message and OK; an ordered stream's answer to
    /// request `slot`. Ignored once the call ended.
    func answer(_ message: [UInt8], slot: Int) {
        guard !isFinished else { return }
        answer(framed: compression.frame(message), slot: slot)
    }

    /// As ``answer(_:slot:)``, for a message after room for its prefix
    /// (`serializedBytes(reservingPrefix:)`): framed in place, not copied.
    func answer(prefixed message: consuming [UInt8], slot: Int) {
        guard !isFinished else { return }
        answer(framed: compression.frame(prefixed: message), slot: slot)
    }

    /// An ordered stream's answers wait framed (the call's compression applies to each alike).
    private func answer(framed: consuming [UInt8], slot: Int) {
        if replies != nil {
            replies?.answered(slot, .message(framed))
            return driveReplies()
        }
        mode = .ended(answered: true)
        finish(answering: framed)
    }

    /// An immediate unary method's failure, or an ordered stream's for request `slot` (the call
    /// ends with it once the answers before it are out). Ignored once the call ended.
    func answer(_ status: GRPCStatus, slot: Int) {
        guard !isFinished else { return }
        if replies != nil {
            replies?.answered(slot, .failure(status))
            return driveReplies()
        }
        mode = .ended(answered: true)
        finish(status)
    }

    /// What to do if the call ends before an immediate unary method (or an ordered stream's
    /// request `slot`) is answered; at once if it has already ended that way, never if it was
    /// answered (a handler may answer before registering).
    func setCancelAction(_ action: @escaping @Sendable () -> Void, slot: Int) {
        if replies != nil {
            if replies?.setCancel(slot, action) == true { action() }
            return
        }
        switch mode {
        case .answering: mode = .answering(cancel: action)
        case .ended(let answered): if !answered { action() }
        case .unstarted, .task, .collecting, .ordered: break  // no immediate handler has been called
        }
    }

    /// One response message.
    func sendMessage(_ message: [UInt8]) {
        guard !isFinished else { return }
        sendFramed(compression.frame(message))
    }

    /// One response message, framed already.
    func sendFramed(_ framed: consuming [UInt8]) {
        guard !isFinished else { return }
        do {
            try sendResponseHeadersIfNeeded()
            try connection.session.sendData(streamID: streamID, framed, endStream: false)
        } catch {
            connection.streamFailed(self, error: error)
        }
        connection.flush()
        connection.responseQueued()
    }

    /// Ends the call with a unary answer (`framed`, status OK): headers, the message and the OK
    /// trailers in one submission, each from what was prepared once.
    private func finish(answering framed: consuming [UInt8]) {
        guard !isFinished else { return }
        if responseHeadersSent {
            // Not on any current path (an immediate method sends nothing before its answer):
            // the message, then the trailers.
            sendFramed(framed)
            return finish(.ok)
        }
        // Taken once: each use of the unowned reference would check and retain it again.
        let connection = self.connection
        stopCall(.ok, on: connection)
        responseHeadersSent = true
        do {
            try connection.session.sendResponse(
                streamID: streamID, headers: responseHeadersTemplate, body: framed,
                trailers: Self.okTrailersTemplate)
            if !clientHalfClosed { connection.resetAfterNextFlush(streamID) }
        } catch {
            connection.streamFailed(self, error: error)
        }
        connection.flush()
        connection.responseQueued()
    }

    /// Marks the call finished, stops its handler and reports it to the observer.
    private func stopCall(_ status: GRPCStatus, on connection: GRPCServerConnection) {
        isFinished = true
        stopHandler()
        guard let observer = connection.callObserver else { return }
        observer.callFinished(
            GRPCCallSummary(
                path: path, status: status, nanoseconds: loop.now &- startedAt, callRequestID: requestID, peer: peer,
                methodIndex: methodIndex))
    }

    /// Ends the call with `status`: trailers after messages, or Trailers-Only when none were sent.
    func finish(_ status: GRPCStatus) {
        guard !isFinished else { return }
        // Taken once: each use of the unowned reference would check and retain it again.
        let connection = self.connection
        stopCall(status, on: connection)
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
    ///
    /// `detached`: the server dropped a client that did not read its answers; the work behind
    /// the call goes on without it (its results still reach events and metrics): the handler
    /// task is not cancelled and an immediate method's cancel action does not run.
    func cancel(detached: Bool = false) {
        guard !isFinished else { return }
        isFinished = true
        stopHandler(cancellingWork: !detached)
        if path != nil {
            // Only calls that reached a method: a request that was not gRPC at all is no call.
            observer?.callFinished(
                GRPCCallSummary(
                    path: path, status: GRPCStatus(.cancelled, "the client cancelled the call or went away"),
                    nanoseconds: loop.now &- startedAt, callRequestID: requestID, peer: peer, methodIndex: methodIndex))
        }
    }

    private func stopHandler(cancellingWork: Bool = true) {
        if waitsForDeadline { loop.cancelDeadline(self) }
        if requestLink.isQueued { connection.requestCompleted(self) }
        let stopping = mode
        mode = .ended(answered: { if case .ended(true) = stopping { true } else { false } }())
        // An ended call waits for nothing: its handler's send returns (its messages are dropped).
        if let waiter = drainWaiter {
            drainWaiter = nil
            waiter.continuation.resume()
        }
        budget.release(reservedForPending + reservedForRequest)
        reservedForPending = 0
        reservedForRequest = 0
        heldStreamBytes = 0
        switch stopping {
        case .task(let task, let messages):
            messages.cancel()
            if cancellingWork { task.cancel() }
        case .answering(let cancel):
            if cancellingWork, let cancel { cancel() }
        case .ordered:
            let (cancels, reserved) = replies?.end() ?? ([], 0)
            budget.release(reserved)
            if cancellingWork { for cancel in cancels { cancel() } }
        case .unstarted, .collecting, .ended:
            break
        }
    }

    private func sendResponseHeadersIfNeeded() throws {
        guard !responseHeadersSent else { return }
        responseHeadersSent = true
        try connection.session.sendResponseHeaders(
            streamID: streamID, template: responseHeadersTemplate, endStream: false)
    }

    private var responseHeadersTemplate: HTTP2HeaderTemplate {
        compression.acceptsGzip ? GRPCHeaders.gzipResponseHeadersTemplate : GRPCHeaders.responseHeadersTemplate
    }

    /// The trailers of nearly every call, made once.
    private static let okTrailers = [HTTP2Header("grpc-status", "0")]
    private static let okTrailersTemplate = HTTP2HeaderTemplate(okTrailers)

    static func trailers(for status: GRPCStatus) -> [HTTP2Header] {
        if status.code == .ok && status.message.isEmpty { return okTrailers }
        var headers = [HTTP2Header("grpc-status", String(status.code.rawValue))]
        if !status.message.isEmpty {
            // Capped: a message echoing a long input must neither exceed what clients accept in
            // trailers nor what nghttp2 can send (a block it cannot send would leave the call unanswered).
            headers.append(
                HTTP2Header(
                    "grpc-message",
                    GRPCPercentEncoding.encode(status.message, maxBytes: GRPCPercentEncoding.maxEncodedMessageBytes)))
        }
        return headers
    }
}
