import PushCore
import PushTransport

// Answers and their absence: a request's outcome, retries with backoff, and refused streams sent
// again.
extension ProviderConnectionMachine {
    /// Request `id` ended. Its entry (request, submit time, credential generation) is handed
    /// back for the driver to read the answer with; then ``answered`` or ``unanswered``.
    mutating func takeInFlight(_ id: Int32) -> (slot: Int, entry: InFlight)? {
        guard let slot = streams.close(id), let entry = inFlight[slot].take() else { return nil }
        return (slot, entry)
    }

    /// A complete answer, as the dialect reads it.
    /// The entry and outcome are consumed, and their request and strings moved on: a copy of
    /// either is a retain and a release per reference it holds.
    mutating func answered(
        _ entry: consuming InFlight, _ outcome: consuming ProviderOutcome, at time: Time, into actions: inout [Action]
    ) {
        lastProgressAt = time.now
        // An answer proves the connection: a GOAWAY before it was the graceful kind after all.
        peerAnswered = true
        streamAnswered = true
        if let goAway = goAwayBeforeAnswer {
            goAwayBeforeAnswer = nil
            actions.append(.report(.goAway(goAway)))
        }
        let generation = entry.generation
        let request = (consume entry).request
        switch consume outcome {
        case .delivered(let id, let canonicalToken, let httpStatus):
            let result = request.result(
                .delivered, .delivered, httpStatus: httpStatus, id: id, canonicalToken: canonicalToken)
            actions.append(.finish(consume request, result))
        case .rejected(let reason, let httpStatus, let unregisteredAt, let invalidatesToken, let code):
            let result = request.result(
                .rejected, code, httpStatus: httpStatus, reason: reason, unregisteredAt: unregisteredAt,
                invalidatesToken: invalidatesToken)
            actions.append(.finish(consume request, result))
        case .transient(let reason, let httpStatus, .afterBackoff(let notBefore)):
            retryOrFail(
                request, .providerUnavailable, reason: reason, httpStatus: httpStatus, notBefore: notBefore, at: time,
                into: &actions)
        case .transient(let reason, let httpStatus, .onNewConnection):
            retryOrFail(request, .providerUnavailable, reason: reason, httpStatus: httpStatus, at: time, into: &actions)
            if phase == .ready {
                // Shutdown / IdleTimeout: this connection is going away; stop using it.
                phase = .draining
                actions.append(.goAway)
            }
        case .transient(let reason, let httpStatus, .afterRenewingAuthorization):
            // Every request that saw this credential refused reports it; the dialect renews once.
            if generation != 0 { actions.append(.renewAuthorization(generation: generation)) }
            guard !request.authorizationRenewed, !isShutDown, !request.job.collector.isFinished else {
                actions.append(
                    .finish(
                        request, request.result(.rejected, .unauthenticated, httpStatus: httpStatus, reason: reason)))
                return
            }
            var again = request
            again.authorizationRenewed = true
            queue.append(again)
        }
        pump(into: &actions)
    }

    /// Ended without an answer: `refused` (never processed: REFUSED_STREAM, or above a GOAWAY's
    /// last stream id) goes again without counting an attempt; anything else (a reset) is a
    /// failed attempt (``DeliveryCode/streamReset`` when it is the last).
    mutating func unanswered(
        _ entry: InFlight, refused: Bool, reason: @autoclosure () -> String, at time: Time,
        into actions: inout [Action]
    ) {
        if refused {
            var request = entry.request
            request.attempts -= 1
            resendRefused(request, at: time, into: &actions)
        } else {
            retryOrFail(entry.request, .streamReset, reason: reason(), httpStatus: 0, at: time, into: &actions)
        }
        pump(into: &actions)
    }

    /// Sends `request` again after the backoff, or FAILs it with `code` and `reason` (or
    /// `Shutdown`, `Expired`) when it may not go again.
    mutating func retryOrFail(
        _ request: ProviderRequest, _ code: DeliveryCode, reason: String, httpStatus: Int, notBefore: Duration? = nil,
        at time: Time,
        into actions: inout [Action]
    ) {
        // Taken back by its sender (a cancelled fan-out): not retried, nothing waits out a backoff.
        if request.job.collector.isCancelled {
            actions.append(.finish(request, request.cancelledResult))
            return
        }
        let policy = configuration.retry
        let expired = request.job.expiration.map { $0 > 0 && time.unixSeconds >= $0 } ?? false
        let tooLate = notBefore.map { $0 > policy.maxRetryAfter } ?? false
        guard request.attempts < policy.maxAttempts, !expired, !tooLate, !request.job.collector.isFinished,
            !isShutDown
        else {
            let (why, whyCode) = isShutDown ? ("Shutdown", .shutdown) : expired ? ("Expired", .expired) : (reason, code)
            actions.append(.finish(request, request.result(.failed, whyCode, httpStatus: httpStatus, reason: why)))
            return
        }
        var delay = policy.backoff(afterAttempt: request.attempts, unit: unitRandom())
        if let notBefore, notBefore > delay { delay = notBefore }
        postpone(request, by: delay, at: time.now)
    }

    /// A request the provider never processed: at once the first time (a GOAWAY racing it is
    /// ordinary), after the retry backoff later on, and FAILED `StreamRefused` past the policy's
    /// bound. Reported once per connection: a provider that refuses everything would otherwise be
    /// sent the same request thousands of times a second.
    private mutating func resendRefused(_ request: ProviderRequest, at time: Time, into actions: inout [Action]) {
        if request.job.collector.isCancelled {
            actions.append(.finish(request, request.cancelledResult))
            return
        }
        var request = request
        request.refusals += 1
        if request.refusals == 1 {
            queue.prepend(request)
            return
        }
        if !reportedRefusals {
            reportedRefusals = true
            actions.append(.report(.refusing(times: Int(request.refusals))))
        }
        let policy = configuration.retry
        guard Int(request.refusals) <= policy.maxRefusals, !request.job.collector.isFinished, !isShutDown else {
            let reason =
                isShutDown
                ? "Shutdown"
                : "StreamRefused: the provider refused the stream \(request.refusals) times without processing it"
            if !isShutDown { actions.append(.report(.refusedTooOften)) }
            actions.append(
                .finish(request, request.result(.failed, isShutDown ? .shutdown : .streamRefused, reason: reason)))
            return
        }
        postpone(request, by: policy.backoff(afterAttempt: Int(request.refusals) - 1, unit: unitRandom()), at: time.now)
    }

    /// How often requests waiting out a backoff are looked through for ones taken back (a
    /// cancelled fan-out) or whose Send was answered: a backoff can be `maxRetryAfter` (60 s),
    /// and a cancelled message's chunk waits for every request it handed out; so within about a
    /// second they end (`cancelled`, `DeadlineExceeded`) instead of when their backoff would.
    static let delayedSweepInterval: Duration = .seconds(1)

    /// `request` waits `delay` before it goes again; the sweep of what waits is armed.
    private mutating func postpone(_ request: ProviderRequest, by delay: Duration, at now: UInt64) {
        delayed.insert(request, due: now &+ nanoseconds(delay))
        if nextDelayedSweep == nil { nextDelayedSweep = now &+ nanoseconds(Self.delayedSweepInterval) }
    }

    /// Ends the waiting requests nobody waits for any more (see ``delayedSweepInterval``); the
    /// sweep goes on while requests wait.
    mutating func sweepDelayed(at now: UInt64, into actions: inout [Action]) {
        nextDelayedSweep = nil
        var ended: [Action] = []
        _ = delayed.removeAll { request in
            guard let result = Self.abandonment(of: request) else { return false }
            ended.append(.finish(request, result))
            return true
        }
        actions.append(contentsOf: ended)
        if !delayed.isEmpty { nextDelayedSweep = now &+ nanoseconds(Self.delayedSweepInterval) }
    }
}
