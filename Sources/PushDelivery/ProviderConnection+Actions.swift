import PushHTTP2
import PushMetrics
import PushPosix
import PushTLS
import PushTransport

// Carrying out the machine's actions on the transport, the dialect and the metrics, and keeping its
// one timer.
extension ProviderConnection {
    var time: Machine.Time { Machine.Time(now: loop.now, unixSeconds: app.clock()) }

    func perform() {
        while !actions.isEmpty {
            // Swapped out: an action may feed the machine again (a submit that fails).
            var batch: [Machine.Action] = []
            swap(&batch, &actions)
            // Each action moved out of the batch, from the end of it reversed: iterating would copy
            // every action and its payload, a request and a result, retained and released once more
            // each; and a payload-free placeholder left in each place was then destroyed through
            // the runtime's generic array destroy. `popLast`
            // leaves nothing behind, and the emptied batch keeps its capacity.
            batch.reverse()
            while let action = batch.popLast() { perform(action) }
            if actions.isEmpty { swap(&batch, &actions) }
        }
        rearmTimer()
    }

    private func perform(_ action: consuming Machine.Action) {
        switch consume action {
        case .connect:
            connect()
        case .submit:
            setNeedsPump()
        case .finish(let request, let result):
            // Room first: whoever awaits the result may send again at once.
            usage.release(1)
            request.job.collector.complete(slot: request.slot, with: result)
        case .close(let error):
            transport?.close(flushFirst: false, error: error)
        case .closeGracefully:
            transport?.close(flushFirst: true)
        case .goAway:
            try? transport?.session.goAway(errorCode: .noError)
            transport?.setNeedsFlush()
        case .ping:
            try? transport?.session.ping()
            transport?.setNeedsFlush()
        case .renewAuthorization(let generation):
            app.dialect.authorizationRejected(generation: generation)
        case .report(let report):
            self.report(report)
        }
    }

    private func report(_ report: ProviderConnectionReport) {
        switch report {
        case .connectFailed(let error):
            app.log("connection failed", error)
        case .refused(let refusal):
            app.metrics.handshakeRefusals?(refusal.label).increment()
            let (logged, attempts) = usage.refused(
                refusal, at: loop.now, policy: app.configuration.retry,
                logInterval: app.configuration.refusalLogInterval)
            if logged {
                app.log(
                    "the provider refused the connection; reconnecting with backoff",
                    ProviderRefusedHandshake(
                        reason: refusal.description, alert: refusal.label,
                        refusesCertificate: refusal.refusesCertificate,
                        certificate: app.tlsContext.clientCertificate, attempts: attempts))
            }
        case .addressRefused(let reason, let requests):
            app.log("connection refused", TransportError(reason))
            // Counted per request refused, not per report as the other protections.
            app.metrics.protections[.privateAddressRefused]?.increment(by: requests)
            return
        case .closed(let error):
            app.log("connection closed", error)
        case .goAway(let description):
            app.log("GOAWAY", TransportError(description))
        case .refusing(let times):
            app.log(
                "the provider refuses streams without processing them; resending with backoff",
                TransportError("REFUSED_STREAM \(times) times for one request"))
        case .refusedTooOften, .stalled, .pingTimeout:
            // The close that follows a stall or a PING timeout is logged with its reason.
            break
        }
        if let protection = report.protection { app.metrics.protections[protection]?.increment() }
    }

    /// Keeps the one timer set for the machine's next deadline.
    private func rearmTimer() {
        let deadline = machine.nextDeadline
        guard deadline != timerDeadline else { return }
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        timerDeadline = deadline
        guard let deadline else { return }
        timer = loop.schedule(at: deadline) { [self] in
            timer = nil
            timerDeadline = nil
            machine.tick(at: time, lastReceivedAt: transport?.lastReceivedAt ?? 0, into: &actions)
            perform()
        }
    }
}
