import PushHTTP1
import PushHTTP2
import PushPosix
import PushTLS
import PushTransport
import Synchronization

// Connecting, and the transport's events: ready, and closed.
extension ProviderConnection {
    func connect() {
        machine.connecting(at: time)
        let tls: TLSConnection
        let transport: HTTPTransport
        do {
            tls = try TLSConnection(context: app.tlsContext, serverName: usage.origin.host)
            if app.configuration.httpVersion == .http2 {
                transport = try HTTPTransport(
                    loop: loop, tls: tls, role: .client, settings: .clientDefaults, sessionDelegate: self, owner: self)
            } else {
                transport = HTTPTransport(
                    loop: loop, tls: tls, policy: app.configuration.httpVersion, http2Settings: .clientDefaults,
                    http2Delegate: self, http1Delegate: self,
                    owner: self)
            }
        } catch {
            machine.connectFailed(error, at: time, into: &actions)
            return
        }
        self.transport = transport
        transport.connect(
            host: usage.origin.host, port: usage.origin.port, timeout: app.configuration.connectTimeout,
            proxy: app.configuration.proxy.proxy(for: usage.origin.host), admission: app.configuration.admission
        ) {
            [self] result in
            guard case .failure(let error) = result, self.transport === transport else { return }
            self.transport = nil
            if let refusal = error as? AddressRefusal {
                let reason = "the push service host \(refusal) (set allow_private_addresses to allow)"
                machine.connectRefused(reason: reason, into: &actions)
            } else {
                machine.connectFailed(error, at: time, into: &actions)
            }
            perform()
        }
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTPTransport) {
        guard transport === self.transport else { return }
        isOpen.store(true, ordering: .relaxed)
        let isHTTP1 = transport.http1Session != nil
        machine.connected(at: time, pings: !isHTTP1, into: &actions)
        if isHTTP1 {
            // One request at a time, from the start: there are no settings to wait for.
            http1InFlight = nil
            machine.peerSettings(maxConcurrent: 1, into: &actions)
        }
        perform()
    }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        guard transport === self.transport else { return }
        self.transport = nil
        isOpen.store(false, ordering: .relaxed)
        streamsInFlight.store(0, ordering: .relaxed)
        if let id = http1InFlight, let http1 = transport.http1Session {
            http1InFlight = nil
            if !http1.answerStarted && http1.answered > 0, let (slot, entry) = machine.takeInFlight(id) {
                // A kept-alive connection the server closed (as idle, say) before any byte of the
                // answer: the request was not processed; it goes again without an attempt counted.
                answers[slot] = ProviderResponse()
                machine.unanswered(entry, refused: true, reason: "", at: time, into: &actions)
            }
            // Anything else (the first request of a connection, or an answer cut off) is lost with
            // the connection: retried as an attempt.
        }
        machine.closed(error: error, at: time, into: &actions)
        perform()
    }
}
