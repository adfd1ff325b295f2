import PushCore
import PushTransport
import Testing

@testable import PushDelivery

// Each way the machine ends a request, with the code the gateway decides on beside the reason.
extension ProviderConnectionMachineTests {
    @Test("a provider's refusal keeps the dialect's code: a refused credential is not a refused message")
    func rejectionKeepsItsCode() {
        var rig = Rig()
        rig.enqueue(["a", "b"])
        rig.open()
        let ids = rig.submitAll()
        rig.answer(
            ids[0],
            .rejected(
                reason: "InvalidProviderToken", httpStatus: 403, unregisteredAt: 0, invalidatesToken: false,
                code: .credentialsRefused))
        rig.answer(
            ids[1],
            .rejected(
                reason: "Unregistered", httpStatus: 410, unregisteredAt: 7, invalidatesToken: true,
                code: .rejectedByProvider))
        #expect(rig.results["a"]?.status == .rejected)
        #expect(rig.results["a"]?.code == .credentialsRefused)
        #expect(rig.results["b"]?.code == .rejectedByProvider)
        #expect(rig.results["b"]?.unregisteredAt == 7)
    }

    @Test("delivered is coded delivered")
    func deliveredCode() {
        var rig = Rig()
        rig.enqueue(["a"])
        rig.open()
        rig.answer(rig.submitAll()[0], Self.delivered)
        #expect(rig.results["a"]?.code == .delivered)
    }

    @Test("a stream reset on the last attempt is FAILED StreamReset, coded streamReset")
    func streamResetCode() {
        var rig = Rig { $0.retry.maxAttempts = 1 }
        rig.enqueue(["a"])
        rig.open()
        rig.reset(rig.submitAll()[0], refused: false)
        #expect(rig.results["a"]?.status == .failed)
        #expect(rig.results["a"]?.reason == "StreamReset(CANCEL)")
        #expect(rig.results["a"]?.code == .streamReset)
    }

    @Test("APNs' own Shutdown, answered on every attempt, ends providerUnavailable, not shutdown")
    func providerShutdownIsNotOurs() {
        var rig = Rig { $0.retry.maxAttempts = 1 }
        rig.enqueue(["a"])
        rig.open()
        rig.answer(rig.submitAll()[0], .transient(reason: "Shutdown", httpStatus: 503, retry: .onNewConnection))
        #expect(rig.results["a"]?.reason == "Shutdown")
        #expect(rig.results["a"]?.code == .providerUnavailable)
    }

    @Test("no credential to be had FAILs what waits, coded noCredential")
    func noCredentialCode() {
        var rig = Rig()
        rig.enqueue(["a"])
        rig.open()
        rig.machine.authorizationPending()
        rig.machine.authorizationFailed("OAuthTokenError: no answer", into: &rig.actions)
        rig.take()
        #expect(rig.results["a"]?.reason == "OAuthTokenError: no answer")
        #expect(rig.results["a"]?.code == .noCredential)
    }

    @Test("a request whose Send already ended is dropped at submission, coded deadlineExceeded")
    func deadlineCode() {
        var rig = Rig()
        let job = Job(tokens: 1)
        rig.enqueue(["a"], job: job)
        job.collector.expire()
        rig.open()
        #expect(rig.submitAll().isEmpty)
        #expect(rig.results["a"]?.reason == "DeadlineExceeded")
        #expect(rig.results["a"]?.code == .deadlineExceeded)
    }

    @Test("requests a cancelled fan-out takes back are dropped at submission, coded cancelled; the wire's finish")
    func cancelledCode() {
        var rig = Rig()
        let cancellation = DeliveryCancellation()
        let job = Job(tokens: 3, cancellation: cancellation)
        rig.enqueue(["a"], job: job)
        rig.open()
        let onTheWire = rig.submitAll()
        #expect(onTheWire.count == 1)
        rig.enqueue(["b", "c"], job: job)
        cancellation.cancel()
        #expect(rig.submitAll().isEmpty)
        #expect(rig.results["b"]?.code == .cancelled && rig.results["c"]?.code == .cancelled)
        #expect(rig.results["b"]?.reason == "Cancelled")
        #expect(rig.results["a"] == nil)
        rig.answer(onTheWire[0], Self.delivered)
        #expect(rig.results["a"]?.code == .delivered)
    }

    @Test("a taken-back request answered 429 is not retried: cancelled at once, with no backoff to wait out")
    func cancelledIsNotRetried() {
        var rig = Rig { $0.retry.maxRetryAfter = .seconds(60) }
        let cancellation = DeliveryCancellation()
        rig.enqueue(["a"], job: Job(tokens: 1, cancellation: cancellation))
        rig.open()
        let ids = rig.submitAll()
        cancellation.cancel()
        rig.answer(
            ids[0],
            .transient(reason: "TooManyRequests", httpStatus: 429, retry: .afterBackoff(notBefore: .seconds(30))))
        #expect(rig.results["a"]?.code == .cancelled)
    }

    @Test("a request waiting out a 30 s Retry-After when its fan-out is cancelled ends cancelled within a second")
    func cancelledWhileWaitingOutBackoff() throws {
        var rig = Rig { $0.retry.maxRetryAfter = .seconds(60) }
        let cancellation = DeliveryCancellation()
        rig.enqueue(["a"], job: Job(tokens: 1, cancellation: cancellation))
        rig.enqueue(["b"])
        rig.open()
        let ids = rig.submitAll()
        let tooMany = ProviderOutcome.transient(
            reason: "TooManyRequests", httpStatus: 429, retry: .afterBackoff(notBefore: .seconds(30)))
        for id in ids { rig.answer(id, tooMany) }
        #expect(rig.machine.delayedCount == 2)
        let cancelledAt = rig.now
        cancellation.cancel()
        rig.tickAtDeadline()
        #expect(rig.now - cancelledAt <= 1_000_000_000, "the sweep comes within a second, not at the backoff's end")
        #expect(rig.results["a"]?.code == .cancelled && rig.results["a"]?.reason == "Cancelled")
        #expect(rig.results["b"] == nil, "one nobody took back waits on")
        #expect(rig.machine.delayedCount == 1)
        // The driver ticks at every deadline (liveness checks included) until b is due.
        for _ in 0..<100 where rig.machine.delayedCount > 0 { rig.tickAtDeadline() }
        #expect(rig.now - cancelledAt >= 29_000_000_000)
        #expect(rig.machine.nextDelayedSweep == nil, "no sweep while nothing waits")
        let resent = rig.submitAll()
        try #require(resent.count == 1)
        rig.answer(resent[0], Self.delivered)
        #expect(rig.results["b"]?.code == .delivered && rig.results["b"]?.attempts == 2)
    }

    @Test("a request waiting out a backoff when its Send was answered (its deadline) ends then, not after the backoff")
    func answeredSendsRequestLeavesBackoff() {
        var rig = Rig { $0.retry.maxRetryAfter = .seconds(60) }
        let job = Job(tokens: 1)
        rig.enqueue(["a"], job: job)
        rig.open()
        rig.answer(
            rig.submitAll()[0],
            .transient(reason: "TooManyRequests", httpStatus: 429, retry: .afterBackoff(notBefore: .seconds(50))))
        job.collector.expire()
        let expiredAt = rig.now
        rig.tickAtDeadline()
        #expect(rig.now - expiredAt <= 1_000_000_000)
        #expect(rig.results["a"]?.code == .deadlineExceeded)
        #expect(rig.machine.delayedCount == 0)
    }

    @Test("taken-back requests waiting for an unreachable provider end cancelled, not ProviderUnreachable")
    func cancelledWhileUnreachable() {
        var rig = Rig { $0.maxConnectAttempts = 1 }
        let cancellation = DeliveryCancellation()
        rig.enqueue(["a"], job: Job(tokens: 1, cancellation: cancellation))
        rig.enqueue(["b"])
        cancellation.cancel()
        rig.machine.connecting(at: rig.time)
        rig.machine.connectFailed(TransportError("refused"), at: rig.time, into: &rig.actions)
        rig.take()
        #expect(rig.results["a"]?.code == .cancelled)
        #expect(rig.results["b"]?.code == .unreachable)
    }

    @Test("in flight when a connection closed right after its GOAWAY: FAILED ProviderUnreachable, coded unreachable")
    func refusedConnectionCode() {
        var rig = Rig { $0.retry.maxAttempts = 1 }
        rig.enqueue(["a"])
        rig.open()
        rig.submitAll()
        rig.machine.goAwayReceived("NO_ERROR BadCertificate", at: rig.time, into: &rig.actions)
        rig.close()
        #expect(rig.results["a"]?.reason.hasPrefix("ProviderUnreachable") == true)
        #expect(rig.results["a"]?.code == .unreachable)
    }
}
