import PushCredentials
import PushHTTP1
import PushHTTP2
import PushPosix
import PushTransport
import Synchronization

// Sending: the pump that writes what the machine lets go out, with the dialect's current credential.
extension ProviderConnection {
    /// Runs ``pump()`` at the end of this loop turn (once however often it is asked for), before
    /// the transport's flush, so what it submits goes out in the same write.
    func setNeedsPump() {
        guard !pumpScheduled else { return }
        pumpScheduled = true
        loop.executeAtEndOfTurn { [self] in
            pumpScheduled = false
            pump()
        }
    }

    private func pump() {
        guard let transport, machine.phase == .ready, transport.http1Session?.canSend ?? true,
            refreshAuthorization()
        else {
            perform()
            return
        }
        let time = self.time
        let generation = authorization?.generation ?? 0
        var submitted = false
        while let request = machine.nextSubmission(into: &actions) {
            // The client made every job of this connection with the dialect's makeJob.
            let job = unsafeDowncast(request.job as AnyObject, to: Dialect.Job.self)
            let wire: ProviderWire
            if let http1 = transport.http1Session {
                wire = ProviderWire(carrier: .http1(http1, id: nextHTTP1ID))
            } else {
                wire = ProviderWire(carrier: .http2(transport.session))
            }
            switch app.dialect.submit(
                request, job: job, authorization: authorization?.value, on: wire, scratch: &scratch)
            {
            case .success(let streamID):
                if transport.http1Session != nil {
                    http1InFlight = streamID
                    nextHTTP1ID &+= 2
                }
                let slot = machine.submitted(consume request, id: streamID, generation: generation, at: time)
                if slot == answers.count {
                    answers.append(ProviderResponse())
                } else {
                    answers[slot] = ProviderResponse()
                }
                submitted = true
            case .failure(let error) where error.refusesRequestOnly:
                machine.requestRefused(request, reason: error.description, into: &actions)
            case .failure(let error):
                machine.submitFailed(request, error: error, into: &actions)
            }
        }
        streamsInFlight.store(machine.inFlightCount, ordering: .relaxed)
        if submitted { transport.setNeedsFlush() }
        perform()
    }

    /// Makes sure ``authorization`` holds the dialect's current credential (once per pump pass:
    /// a credential lasts many minutes). False when nothing can be submitted now: the credential is
    /// being fetched (the pump resumes when it arrives), or cannot be had (what waits is FAILED).
    private func refreshAuthorization() -> Bool {
        switch app.dialect.authorization(for: self) {
        case .none:
            authorization = nil
            return true
        case .credential(let value, let generation):
            if authorization?.generation != generation {
                authorization = (Array(value.utf8), generation)
            }
            return true
        case .pending:
            machine.authorizationPending()
            return false
        case .failed(let reason):
            machine.authorizationFailed(reason, into: &actions)
            return false
        }
    }

    /// The dialect has a credential, or gave up fetching one: submit again. Any thread.
    func authorizationDidChange() {
        loop.execute { [self] in
            machine.authorizationChanged(into: &actions)
            perform()
        }
    }
}
