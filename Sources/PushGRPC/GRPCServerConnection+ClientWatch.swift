import PushHTTP2
import PushPosix
import PushTransport

// How a connection protects itself from its client: the client watch (unread answers, control
// frame floods) and the drop it decides, the handlers waiting for their output to drain, and a
// stalled HTTP/1.1 client.
extension GRPCServerConnection {
    /// `call`'s handler waits for its output to drain: looked at again after each flush.
    func waitForDrain(_ call: GRPCServerCall) {
        watchFlushes()
        drainWaiters.append(call)
    }

    func waitForDrain(_ call: ConnectCall) {
        watchFlushes()
        connectDrainWaiters.append(call)
    }

    func watchFlushes() {
        if drainWaiters.isEmpty && connectDrainWaiters.isEmpty {
            transport.onFlushed = { [unowned self] in outputFlushed() }
        }
    }

    func outputFlushed() {
        drainWaiters.removeAll { !$0.outputFlushed() }
        connectDrainWaiters.removeAll { !$0.outputFlushed() }
        if drainWaiters.isEmpty && connectDrainWaiters.isEmpty { transport.onFlushed = nil }
    }

    /// A call queued response bytes (see ``GRPCClientWatch``).
    func responseQueued() {
        guard let transport, !transport.isClosed else { return }
        perform(watch.responseQueued(unsent: transport.unsentBytes, progress: transport.outputProgress))
    }

    func perform(_ action: GRPCClientWatch.Action) {
        switch action {
        case .none:
            break
        case .armWriteTimer(let delay):
            writeTimer = loop.schedule(after: delay) { [self] in
                guard let transport = self.transport else { return }
                writeTimer = nil
                guard !transport.isClosed else { return }
                perform(watch.writeTimerFired(unsent: transport.unsentBytes, progress: transport.outputProgress))
            }
        case .drop(let reason):
            drop(reason)
        }
    }

    /// GOAWAY (ENHANCE_YOUR_CALM) and close, logged and counted. The client's calls end without an
    /// answer but their work goes on (``GRPCServerCall/cancel(detached:)``).
    func drop(_ reason: GRPCClientWatch.Reason) {
        abandoned = true
        let goAwayText: String
        let why: String
        switch reason {
        case .unsentOverLimit(let unsent):
            why = "over max_unsent_response_bytes (\(configuration.maxUnsentResponseBytes) bytes)"
            goAwayText = "client does not read its responses"
            configuration.callObserver?.serverEvent(.unreadClientClosed(peer: peer, unsentBytes: unsent, reason: why))
        case .noProgress(let unsent):
            why = "took no response bytes for write_timeout (\(configuration.writeTimeout ?? .zero))"
            goAwayText = "client does not read its responses"
            configuration.callObserver?.serverEvent(.unreadClientClosed(peer: peer, unsentBytes: unsent, reason: why))
        case .controlFrameFlood(let frames):
            why = "\(frames) control frames within a second"
            goAwayText = "too many control frames"
            configuration.callObserver?.serverEvent(.controlFrameFlood(peer: peer, frames: frames))
        }
        if transport.version == .http2 {
            try? session.goAway(
                errorCode: .enhanceYourCalm, lastStreamID: highestWorkingStreamID, debugData: Array(goAwayText.utf8))
        }
        // One attempt to send the GOAWAY; whatever the client does not take is dropped with it.
        transport.flushAndClose(error: TransportError("client closed: \(why)"))
    }

    /// An HTTP/1.1 client stalled inside a request: closed after what was already answered.
    func closeStalledClient(_ why: String) {
        guard let transport, !transport.isClosed else { return }
        transport.close(flushFirst: true, error: TransportError("client closed: \(why)"))
    }
}
