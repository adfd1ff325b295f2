import PushHTTP2
import PushPosix
import PushTransport

// A connection's timers: the idle timeout (kept off while an admitted call is busy), the limit on
// the time a request takes to arrive, and graceful shutdown's two GOAWAYs.
extension GRPCServerConnection {
    /// `call`'s request must be complete within `limit` (the same for every call of the connection).
    func limitRequestTime(_ call: GRPCServerCall, _ limit: Duration) {
        if requestTimeLimit.limit != limit { requestTimeLimit = (limit, MonotonicDeadline.nanoseconds(in: limit)) }
        let (deadline, overflow) = call.startedAt.addingReportingOverflow(requestTimeLimit.nanoseconds)
        requestDeadlines.append(call, deadline: overflow ? .max : deadline)
        if requestTimer == nil { armRequestTimer(limit) }
    }

    /// `call`'s request is complete, or the call ended.
    func requestCompleted(_ call: GRPCServerCall) {
        requestDeadlines.remove(call)
    }

    /// For the oldest waiting call; when it fires, the calls past their deadline end and it is set
    /// for the next (if the oldest completed meanwhile, it fires early and is set again).
    func armRequestTimer(_ limit: Duration) {
        guard let oldest = requestDeadlines.oldestDeadline else { return }
        requestTimer = loop.schedule(at: oldest) { [self] in
            requestTimer = nil
            var due: [GRPCServerCall] = []
            requestDeadlines.removeDue(now: loop.now, into: &due)
            for call in due { call.requestTimeExceeded(limit) }
            if requestTimer == nil { armRequestTimer(limit) }
        }
    }

    /// A request that is not gRPC (Connect, a route) began; `busy`: an admitted one, and the
    /// connection is in use until it ends (``ConnectDoor/Decision/keepsConnectionBusy``).
    func requestBegan(busy: Bool) {
        registry.callStarted()
        guard busy else { return }
        busyCalls += 1
        if let idleTimer {
            loop.cancelTimer(idleTimer)
            self.idleTimer = nil
        }
    }

    func requestEnded(busy: Bool) {
        registry.callEnded()
        guard busy else { return }
        busyCalls -= 1
        if busyCalls == 0 { armIdleTimer() }
    }

    /// An admitted call began: the connection is in use. Keyless calls (Health) never count, so
    /// a health watch cannot hold a connection open past the idle timeout for ever.
    func callBecameBusy(_ call: GRPCServerCall) {
        guard call.admitted() else { return }
        busyCalls += 1
        if let idleTimer {
            loop.cancelTimer(idleTimer)
            self.idleTimer = nil
        }
    }

    /// With no admitted call for `idleTimeout`, the connection says GOAWAY (`max_idle`) and closes.
    func armIdleTimer() {
        guard let timeout = configuration.idleTimeout, idleTimer == nil, !shuttingDown,
            transport?.isClosed != true
        else { return }
        idleTimer = loop.schedule(after: timeout) { [self] in
            idleTimer = nil
            guard busyCalls == 0, let transport, !transport.isClosed else { return }
            guard transport.isReady, transport.version == .http2 else {
                // Never finished its TLS handshake (nothing to say goodbye over), or HTTP/1.1
                // with no request in progress (busyCalls counts them).
                transport.close(flushFirst: transport.version == .http1)
                return
            }
            try? session.goAway(errorCode: .noError, debugData: Array("max_idle".utf8))
            flush()
            closeIfStillIdle(after: timeout)
        }
    }

    /// After the idle GOAWAY the session winds down by itself, unless the peer holds a stream open
    /// without ever finishing its header block (a slowloris: no call begins, so nothing times out,
    /// and nghttp2 keeps wanting to read). Still there and still without a call `timeout` later:
    /// closed, keyless calls (a health watch) and all. An admitted call that begins meanwhile
    /// cancels this (``callBecameBusy(_:)``).
    func closeIfStillIdle(after timeout: Duration) {
        idleTimer = loop.schedule(after: timeout) { [self] in
            idleTimer = nil
            guard busyCalls == 0, let transport, !transport.isClosed else { return }
            transport.close(flushFirst: true)
        }
    }

    /// Graceful shutdown (gRPC's two-phase GOAWAY): a GOAWAY with the largest stream id now, so the
    /// client stops opening calls while those in flight can still arrive; the final GOAWAY with the
    /// real last stream id a moment later. Running calls finish; then the session winds down and
    /// the transport closes.
    func shutDownGracefully() {
        guard !shuttingDown, let transport, !transport.isClosed else { return }
        shuttingDown = true
        guard transport.isReady else {
            transport.close(flushFirst: false)
            return
        }
        if let http1 {
            // HTTP/1.1's GOAWAY: the answers to what was read, the last saying Connection: close.
            http1.shutDownGracefully()
            return
        }
        if let idleTimer { loop.cancelTimer(idleTimer) }
        idleTimer = nil
        try? session.sendShutdownNotice()
        flush()
        loop.schedule(after: .milliseconds(200)) { [self] in
            guard let transport = self.transport, !transport.isClosed else { return }
            try? session.goAway(errorCode: .noError, debugData: Array("shutdown".utf8))
            flush()
        }
    }
}
