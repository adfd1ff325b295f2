import PushCore
import PushTransport

// The connection's lifecycle: connecting, refusals, the peer's settings and GOAWAY, and the close
// (what was in flight is retried or FAILED, and the connect backoff decided).
extension ProviderConnectionMachine {
    mutating func connecting(at time: Time) {
        phase = .connecting
        peerLimit = nil
        handshakeDeadline = time.now &+ nanoseconds(configuration.connectTimeout)
    }

    /// The connect failed: TCP, TLS (a refusing alert), or a connection the provider ended before
    /// answering anything on it (``ConnectionRefusal``). The next attempt waits out the connect
    /// backoff (jittered, growing with each failure in a row, bounded by the retry policy's
    /// `maxBackoff`). What waits is FAILED `ProviderUnreachable` at once when the provider refused
    /// our certificate, else after `maxConnectAttempts` failures in a row.
    mutating func connectFailed(_ error: any Error, at time: Time, into actions: inout [Action]) {
        phase = .idle
        handshakeDeadline = nil
        connectFailures += 1
        let refusal = ConnectionRefusal.reading(error)
        if let refusal {
            actions.append(.report(.refused(refusal)))
        } else {
            actions.append(.report(.connectFailed(error)))
        }
        let refusesCertificate = refusal?.refusesCertificate ?? false
        certificateRefusal = refusesCertificate ? refusal : nil
        if refusesCertificate || connectFailures >= configuration.maxConnectAttempts {
            // Unreachable, or refusing us: fail what waits rather than hold it without end.
            let reason = "ProviderUnreachable: \(refusal.map { "\($0)" } ?? "\(error)")"
            finishQueued(.failed, .unreachable, reason: reason, delayedToo: refusesCertificate, into: &actions)
        }
        guard !isShutDown else { return }
        let delay = configuration.retry.backoff(afterAttempt: connectFailures, unit: unitRandom())
        reconnectAt = time.now &+ nanoseconds(delay)
    }

    /// The host's addresses may not be connected to (``AddressRefusal``): what waits is REJECTED
    /// with `reason` at once, as the same answer would come on every retry; a later request asks
    /// again (the resolver's cache makes that cheap).
    mutating func connectRefused(reason: String, into actions: inout [Action]) {
        phase = .idle
        handshakeDeadline = nil
        connectFailures = 0
        reconnectAt = nil
        actions.append(.report(.addressRefused(reason, requests: queue.count)))
        finishQueued(.rejected, .addressRefused, reason: reason, into: &actions)
    }

    /// TLS (and ALPN) done: the connection may carry requests once the peer's settings arrive
    /// (HTTP/1.1: the driver reports a limit of 1 at once). `pings`: the protocol has PING.
    mutating func connected(at time: Time, pings: Bool = true, into actions: inout [Action]) {
        phase = .ready
        connectedAt = time.now
        peerAnswered = false
        streamAnswered = false
        goAwayBeforeAnswer = nil
        self.pings = pings
        handshakeDeadline = nil
        lastProgressAt = 0
        pingSentAt = nil
        nextLivenessCheck = time.now &+ nanoseconds(livenessTick)
        pump(into: &actions)
    }

    /// The provider answered on this connection (its first SETTINGS, or the head of an HTTP/1.1
    /// answer): it took our handshake, so a close from now on is a lost connection (unless a
    /// GOAWAY came before any stream was answered: APNs sends its SETTINGS first).
    mutating func peerAnsweredConnection() {
        peerAnswered = true
    }

    /// The peer's settings: how many requests it takes at once (re-read on every SETTINGS).
    mutating func peerSettings(maxConcurrent: UInt32, into actions: inout [Action]) {
        peerLimit = maxConcurrent
        pump(into: &actions)
    }

    /// The peer's GOAWAY: what it will still answer is answered, the rest comes back refused.
    /// A GOAWAY before any stream was answered is how APNs turns away a certificate it will not
    /// take (`BadCertificate`): it is kept, and unless a stream is answered after it, the close that
    /// follows is a refused connect (``ConnectionRefusal``) rather than a lost connection.
    ///
    /// Only a GOAWAY that names a certificate reason, or comes within `connectTimeout` of the
    /// connection being made, counts so: a provider closing a connection that sat idle with
    /// nothing asked (hours later) is saying goodbye, not refusing us.
    mutating func goAwayReceived(_ description: String, at time: Time, into actions: inout [Action]) {
        if phase == .ready || phase == .connecting { phase = .draining }
        let early = time.now &- connectedAt <= nanoseconds(configuration.connectTimeout)
        let namesCertificate = ConnectionRefusal.certificateGoAwayReasons.contains { description.contains($0) }
        if !streamAnswered && (early || namesCertificate) {
            goAwayBeforeAnswer = description
        } else {
            actions.append(.report(.goAway(description)))
        }
    }

    /// The peer will close the connection after what is in flight (HTTP/1.1 `Connection: close`):
    /// nothing more goes on it, and the next connection is made when it has closed.
    mutating func peerClosing() {
        if phase == .ready || phase == .connecting { phase = .draining }
    }

    /// The connection closed: what was in flight got no answer and is retried (or FAILED), and
    /// the next connection is made when work waits.
    mutating func closed(error: (any Error)?, at time: Time, into actions: inout [Action]) {
        let wasConnected = isConnected
        let refusal: ConnectionRefusal? =
            !wasConnected
            ? nil
            : goAwayBeforeAnswer.map { ConnectionRefusal(cause: .goAway($0)) }
                ?? (peerAnswered ? nil : ConnectionRefusal.reading(error) ?? ConnectionRefusal(cause: .closed(error)))
        goAwayBeforeAnswer = nil
        phase = .idle
        handshakeDeadline = nil
        nextLivenessCheck = nil
        pingSentAt = nil
        let lost = streams.open.sorted { $0.id < $1.id }.compactMap { inFlight[$0.slot].take() }
        streams.removeAll()
        let lostReason = refusal.map { "ProviderUnreachable: \($0)" } ?? "ConnectionLost"
        let lostCode: DeliveryCode = refusal == nil ? .connectionLost : .unreachable
        for entry in lost {
            retryOrFail(entry.request, lostCode, reason: lostReason, httpStatus: 0, at: time, into: &actions)
        }
        guard wasConnected else {
            connectFailed(
                error ?? TransportError("the connection closed during the TLS handshake"), at: time, into: &actions)
            return
        }
        if let refusal {
            // Ended right after the handshake: a failed connect, with its backoff, not a lost
            // connection redialled at once (which, refused every time, was a reconnect storm).
            connectFailed(refusal, at: time, into: &actions)
            return
        }
        // A connection that served: the connect backoff starts afresh.
        connectFailures = 0
        certificateRefusal = nil
        if let error { actions.append(.report(.closed(error))) }
        // The next connection is made on the next turn, not inside the close.
        if !queue.isEmpty && !isShutDown { reconnectAt = time.now }
    }
}
