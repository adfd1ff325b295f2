import PushCore
import PushHTTP2
import PushPosix

// A call's answers: response messages, the end with a status, cancellation, and the response
// headers and trailers.
extension GRPCServerCall {
    /// An immediate unary method's answer: its message and OK; an ordered stream's answer to
    /// request `slot`. Ignored once the call ended.
    func answer(_ message: [UInt8], slot: Int) {
        guard !machine.isEnded else { return }
        answer(framed: compression.frame(message), slot: slot)
    }

    /// As ``answer(_:slot:)``, for a message after room for its prefix
    /// (`serializedBytes(reservingPrefix:)`): framed in place, not copied.
    func answer(prefixed message: consuming [UInt8], slot: Int) {
        guard !machine.isEnded else { return }
        answer(framed: compression.frame(prefixed: message), slot: slot)
    }

    /// An ordered stream's answers wait framed (the call's compression applies to each alike).
    private func answer(framed: consuming [UInt8], slot: Int) {
        if machine.replies != nil {
            machine.orderedAnswered(slot, .message(framed))
            return driveReplies()
        }
        if let ending = machine.answered() { end(ending, answering: framed) }
    }

    /// An immediate unary method's failure, or an ordered stream's for request `slot` (the call
    /// ends with it once the answers before it are out). Ignored once the call ended.
    func answer(_ status: GRPCStatus, slot: Int) {
        guard !machine.isEnded else { return }
        if machine.replies != nil {
            machine.orderedAnswered(slot, .failure(status))
            return driveReplies()
        }
        if let ending = machine.answered(failing: status) { end(ending) }
    }

    /// What to do if the call ends before an immediate unary method (or an ordered stream's
    /// request `slot`) is answered; at once if it has already ended that way, never if it was
    /// answered (a handler may answer before registering).
    func setCancelAction(_ action: @escaping @Sendable () -> Void, slot: Int) {
        if machine.replies != nil {
            if machine.orderedCancelRegistered(slot, action) { action() }
            return
        }
        switch machine.cancelActionRegistered() {
        case .keep: cancelAction = action
        case .runNow: action()
        case .ignore: break
        }
    }

    /// One response message.
    func sendMessage(_ message: [UInt8]) {
        guard !machine.isEnded else { return }
        sendFramed(compression.frame(message))
    }

    /// One response message, framed already.
    func sendFramed(_ framed: consuming [UInt8]) {
        guard let headFirst = machine.messageWritten() else { return }
        do {
            if headFirst {
                try connection.session.sendResponseHeaders(
                    streamID: streamID, template: responseHeadersTemplate, endStream: false)
            }
            try connection.session.sendData(streamID: streamID, framed, endStream: false)
        } catch {
            connection.streamFailed(self, error: error)
        }
        connection.flush()
        connection.responseQueued()
    }

    /// Ends the call with `status`: trailers after messages, or Trailers-Only when none were sent.
    func finish(_ status: GRPCStatus) {
        if let ending = machine.finish(status) { end(ending) }
    }

    /// Writes the machine's end of the call, with its status.
    func end(_ ending: ServerCallMachine.Ending) {
        // Taken once: each use of the unowned reference would check and retain it again.
        let connection = self.connection
        stop(ending.stop, on: connection)
        report(ending.status, on: connection)
        let trailers = Self.trailers(for: ending.status)
        do {
            if ending.headWritten {
                try connection.session.sendTrailers(streamID: streamID, headers: trailers)
            } else {
                try connection.session.sendResponseHeaders(
                    streamID: streamID, headers: GRPCHeaders.responseHeaders + trailers, endStream: true)
            }
            if ending.resetsStream {
                // The client is still sending a request we no longer read (PROTOCOL-HTTP2.md:
                // trailers before the client's END_STREAM are followed by RST_STREAM NO_ERROR), or
                // is a bidirectional stream that never half-closes and must not keep the call, and
                // so graceful shutdown, waiting. Only after the end is on the wire, or nghttp2
                // drops it.
                connection.resetAfterNextFlush(streamID)
            }
        } catch {
            connection.streamFailed(self, error: error)
        }
        connection.flush()
    }

    /// Writes the machine's end of a unary call answered OK with `framed`: headers, the message
    /// and the OK trailers in one submission, each from what was prepared once.
    private func end(_ ending: ServerCallMachine.Ending, answering framed: consuming [UInt8]) {
        let connection = self.connection
        stop(ending.stop, on: connection)
        report(.ok, on: connection)
        do {
            if ending.headWritten {
                // Not on any current path (an immediate method sends nothing before its answer):
                // the message, then the trailers.
                try connection.session.sendData(streamID: streamID, framed, endStream: false)
                try connection.session.sendTrailers(streamID: streamID, headers: Self.okTrailers)
            } else {
                try connection.session.sendResponse(
                    streamID: streamID, headers: responseHeadersTemplate, body: framed,
                    trailers: Self.okTrailersTemplate)
            }
            if ending.resetsStream { connection.resetAfterNextFlush(streamID) }
        } catch {
            connection.streamFailed(self, error: error)
        }
        connection.flush()
        connection.responseQueued()
    }

    /// The stream is gone (client reset, connection closed): stop without answering.
    ///
    /// `detached`: the server dropped a client that did not read its answers; the work behind
    /// the call goes on without it (its results still reach events and metrics): the handler
    /// task is not cancelled and an immediate method's cancel action does not run.
    func cancel(detached: Bool = false) {
        guard let (stop, reports) = machine.clientGone(detached: detached) else { return }
        let connection = self.connection
        self.stop(stop, on: connection)
        // Only calls that reached a method: a request that was not gRPC at all is no call.
        if reports { report(GRPCStatus(.cancelled, "the client cancelled the call or went away"), on: connection) }
    }

    private func report(_ status: GRPCStatus, on connection: GRPCServerConnection) {
        guard let observer = connection.callObserver else { return }
        observer.callFinished(
            GRPCCallSummary(
                path: path, status: status, nanoseconds: loop.now &- startedAt, callRequestID: requestID, peer: peer,
                methodIndex: methodIndex))
    }

    /// Does what the machine's stop says: the handler stops (its work cancelled unless the
    /// machine says not), the budget share and the flow-control bytes held are given back, and
    /// the call leaves its deadlines and wakes its drain waiter.
    private func stop(_ stop: ServerCallMachine.Stop, on connection: GRPCServerConnection) {
        if stop.stopsDeadline, waitsForDeadline { loop.cancelDeadline(self) }
        if requestLink.isQueued { connection.requestCompleted(self) }
        drainWait.resume()
        budget.release(stop.release)
        heldStreamBytes = 0
        let stopping = handler
        handler = .none
        let cancel = cancelAction
        cancelAction = nil
        switch stopping {
        case .task(let task, let messages):
            messages.cancel()
            if stop.cancelsWork { task.cancel() }
        case .immediate:
            if stop.cancelsWork, stop.handler == .answering, let cancel { cancel() }
        case .ordered:
            if stop.cancelsWork { for cancel in stop.cancels { cancel() } }
        case .none:
            break
        }
    }

    /// Whether the connection counts the call busy: see ``ServerCallMachine/admitted()``.
    func admitted() -> Bool { machine.admitted() }

    /// The connection lets the call go; whether it counted it busy.
    func leftConnection() -> Bool { machine.leftConnection() }

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
