import PushCore
import PushHTTP2
import PushPosix

// How a connection starts the request of a new HTTP/2 stream: a gRPC call (checked and admitted
// from its head before any message is kept), or a Connect call or plain route; and its table of
// the streams' calls.
extension GRPCServerConnection {
    // MARK: The streams' calls

    /// `call`'s handler took a request message: its work may begin.
    func workBegan(_ call: GRPCServerCall) {
        highestWorkingStreamID = max(highestWorkingStreamID, call.streamID)
    }

    /// A call's message did not fit the request budget.
    func requestBudgetExceeded(_ call: GRPCServerCall) {
        requestBudgetExceeded(path: call.path)
    }

    func requestBudgetExceeded(path: String?) {
        configuration.callObserver?.serverEvent(.requestBudgetExceeded(peer: peer, path: path))
    }

    /// A session call for a Connect stream failed (the stream is gone).
    func connectStreamFailed(_ streamID: Int32) {
        removeConnectStream(streamID)?.cancel()
    }

    @discardableResult
    func removeConnectStream(_ streamID: Int32) -> ConnectHTTP2Stream? {
        // Most connections have none: no hashing of the id for every gRPC call that ends.
        guard !connectStreams.isEmpty, let stream = connectStreams.removeValue(forKey: streamID) else { return nil }
        requestEnded(busy: stream.keepsConnectionBusy)
        return stream
    }

    func addCall(_ call: GRPCServerCall) {
        calls[call.streamID] = call
        registry.callStarted()
    }

    @discardableResult
    func removeCall(_ streamID: Int32) -> GRPCServerCall? {
        guard let call = calls.removeValue(forKey: streamID) else { return nil }
        registry.callEnded()
        if call.leftConnection() {
            busyCalls -= 1
            if busyCalls == 0 { armIdleTimer() }
        }
        return call
    }

    // MARK: Requests that are not gRPC

    func startConnectStream(headers: [HTTP2Header], streamID: Int32, endStream: Bool) {
        let stream = ConnectHTTP2Stream(server: self, streamID: streamID, headers: headers, requestIDs: &requestIDs)
        connectStreams[streamID] = stream
        requestBegan(busy: stream.keepsConnectionBusy)
        highestWorkingStreamID = max(highestWorkingStreamID, streamID)
        stream.startIfRefused()
        if endStream { stream.receiveEnd() }
        if stream.done { removeConnectStream(streamID) }
    }

    // MARK: Calls

    func startCall(head request: GRPCRequestHead, streamID: Int32, endStream: Bool) {
        let call = GRPCServerCall(
            connection: self, streamID: streamID, maxMessageSize: configuration.maxMessageSize, budget: requestBudget)
        call.requestID = requestIDs.id(given: request.requestID)
        call.peer = peer
        addCall(call)
        if let httpStatus = request.httpRejection {
            try? session.sendResponseHeaders(
                streamID: streamID, headers: [HTTP2Header(":status", String(httpStatus))], endStream: true)
            call.cancel()
            flush()
            return
        }
        defer { if endStream { call.receiveEnd() } }
        let timeout: Duration?
        switch request.timeout {
        case .none: timeout = nil
        case .some(.some(let value)): timeout = value
        case .some(.none):
            call.finish(
                GRPCStatus(
                    .invalidArgument,
                    "grpc-timeout: not a valid timeout (at most 8 digits and a unit H, M, S, m, u or n)"))
            return
        }
        call.compression = request.compression
        if let refusal = request.compression.refusal {
            call.finish(refusal)
            return
        }
        guard let route = request.route else {
            call.finish(GRPCStatus(.unimplemented, router.unimplementedMessage(forPath: request.path)))
            return
        }
        let deadline = timeout.map { MonotonicDeadline.after($0, from: call.startedAt) }
        var context = GRPCCallContext(
            path: route.path, deadlineNanoseconds: deadline, metadata: request.metadata,
            peer: peer, isLoopbackPeer: isLoopbackPeer, isTLS: tls != nil,
            clientCertificateCommonName: clientCertificateCommonName, callRequestID: call.requestID)
        if let admission = route.method.admission {
            // Before a byte of the request is kept: a caller without a valid key holds nothing.
            do throws(GRPCStatus) {
                context.admission = try admission(context)
            } catch {
                call.refuse(path: route.path, error)
                return
            }
            callBecameBusy(call)
        }
        call.start(route, context: context, timeout: timeout)
        if !endStream, let limit = configuration.requestTimeout,
            route.method.kind == .unary || route.method.kind == .serverStreaming
        {
            call.limitRequestTime(limit)
        }
    }
}
