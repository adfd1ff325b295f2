import PushCore
import PushTransport

// Time: the handshake deadline, the reconnect, due retries, and liveness (PING, the stall watch).
extension ProviderConnectionMachine {
    /// Deadlines due at `time`: the handshake's, the reconnect, due retries, and liveness (with
    /// `lastReceivedAt`, when the connection last received any byte).
    mutating func tick(at time: Time, lastReceivedAt: UInt64, into actions: inout [Action]) {
        if phase == .connecting, let deadline = handshakeDeadline, time.now >= deadline {
            handshakeDeadline = nil
            actions.append(.close(TransportError("the TLS handshake did not finish in time")))
        }
        if let at = reconnectAt, time.now >= at { reconnectAt = nil }
        if let sweep = nextDelayedSweep, time.now >= sweep { sweepDelayed(at: time.now, into: &actions) }
        var requeued = false
        while let request = delayed.popDue(now: time.now) {
            if isShutDown {
                actions.append(.finish(request, request.result(.failed, .shutdown, reason: "Shutdown")))
            } else {
                queue.append(request)
                requeued = true
            }
        }
        if delayed.isEmpty { nextDelayedSweep = nil }
        if isConnected, let check = nextLivenessCheck, time.now >= check {
            nextLivenessCheck = time.now &+ nanoseconds(livenessTick)
            checkLiveness(at: time.now, lastReceivedAt: lastReceivedAt, into: &actions)
        }
        if requeued || phase == .idle || phase == .ready { pump(into: &actions) }
    }

    var livenessTick: Duration { min(configuration.pingTimeout, configuration.pingInterval) }

    /// PING after `pingInterval` of silence (`pingTimeout` while requests wait for answers); no
    /// bytes at all within `pingTimeout` of a PING: the connection is dead. Alive but no answer
    /// for `stallTimeout` while requests wait (no settings, 0 streams allowed, a zero window): the
    /// connection is given up. Either way its requests go to the next connection.
    private mutating func checkLiveness(at now: UInt64, lastReceivedAt: UInt64, into actions: inout [Action]) {
        if lastProgressAt == 0 || streams.isEmpty && queue.isEmpty {
            // Nothing waits, so there is nothing to make progress on: the watch starts now.
            lastProgressAt = now
        } else if now &- lastProgressAt >= nanoseconds(configuration.stallTimeout) {
            let why =
                peerLimit == nil
                ? "no SETTINGS from the provider"
                : peerLimit == 0
                    ? "the provider allows 0 streams"
                    : "no answer on any stream"
            actions.append(.report(.stalled(why)))
            giveUp("no progress for \(configuration.stallTimeout) (\(why)): connection given up", into: &actions)
            return
        }
        guard pings else {
            // HTTP/1.1: no PING. Idle for the ping interval: closed, and opened again on demand.
            if streams.isEmpty && queue.isEmpty && now &- lastReceivedAt >= nanoseconds(configuration.pingInterval) {
                phase = .draining
                nextLivenessCheck = nil
                actions.append(.closeGracefully)
            }
            return
        }
        if let sent = pingSentAt {
            if lastReceivedAt >= sent {
                pingSentAt = nil
            } else if now &- sent >= nanoseconds(configuration.pingTimeout) {
                actions.append(.report(.pingTimeout))
                giveUp("no answer to PING: connection presumed dead", into: &actions)
            }
            return
        }
        let quiet = streams.isEmpty ? configuration.pingInterval : configuration.pingTimeout
        if now &- lastReceivedAt >= nanoseconds(quiet) {
            pingSentAt = now
            actions.append(.ping)
        }
    }

    /// Closes a connection that is of no more use; nothing more goes on it or is checked on it.
    private mutating func giveUp(_ why: String, into actions: inout [Action]) {
        phase = .draining
        nextLivenessCheck = nil
        actions.append(.close(TransportError(why)))
    }
}
