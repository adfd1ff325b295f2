import PushCore
import PushTransport
import Testing

@testable import PushDelivery

/// The provider connection's state machine, driven without sockets: every event is a call, every
/// action is looked at.
@Suite("Provider connection state machine")
struct ProviderConnectionMachineTests {
    typealias Machine = ProviderConnectionMachine

    final class Job: ProviderJob {
        let notificationIndex = 0
        let expiration: Int64?
        let collector: DeliveryCollector
        init(tokens: Int, expiration: Int64? = nil, cancellation: DeliveryCancellation? = nil) {
            self.expiration = expiration
            collector = DeliveryCollector(
                placeholders: (0..<tokens).map {
                    DeliveryResult(notificationIndex: 0, token: "t\($0)", status: .failed, code: .deadlineExceeded)
                }, cancellation: cancellation)
        }
    }

    /// A machine, a clock, and what came out of it.
    struct Rig {
        var machine: Machine
        var now: UInt64 = 1_000_000_000
        var unixSeconds: Int64 = 1_800_000_000
        var actions: [Machine.Action] = []
        var results: [String: DeliveryResult] = [:]
        var reports: [ProviderConnectionReport] = []
        var connects = 0
        var closes: [String] = []
        var pings = 0
        var goAways = 0
        var renewals: [Int64] = []
        var submitPending = false
        /// The request on each stream id in flight.
        var onWire: [Int32: Machine.InFlight] = [:]
        var nextStreamID: Int32 = 1
        var generation: Int64 = 1

        init(_ configure: (inout ProviderClientConfiguration) -> Void = { _ in }) {
            var configuration = ProviderClientConfiguration()
            configure(&configuration)
            machine = Machine(configuration: configuration, seed: 42)
        }

        var time: Machine.Time { Machine.Time(now: now, unixSeconds: unixSeconds) }

        mutating func take() {
            for action in actions {
                switch action {
                case .connect: connects += 1
                case .submit: submitPending = true
                case .finish(let request, let result): results[request.token] = result
                case .close(let error): closes.append(error.description)
                case .closeGracefully: closes.append("graceful")
                case .goAway: goAways += 1
                case .ping: pings += 1
                case .renewAuthorization(let generation): renewals.append(generation)
                case .report(let report): reports.append(report)
                }
            }
            actions.removeAll()
        }

        mutating func enqueue(_ tokens: [String], job: Job? = nil) {
            let job = job ?? Job(tokens: tokens.count)
            let requests = tokens.enumerated().map { ProviderRequest(job: job, token: $1, slot: $0) }
            machine.enqueue(requests, into: &actions)
            take()
        }

        /// Connects, handshakes and receives the peer's settings.
        mutating func open(maxConcurrent: UInt32 = 100) {
            if connects == 0 { take() }
            machine.connecting(at: time)
            machine.connected(at: time, into: &actions)
            machine.peerAnsweredConnection()
            machine.peerSettings(maxConcurrent: maxConcurrent, into: &actions)
            take()
        }

        /// Sends what the machine lets go now; returns the stream ids used.
        @discardableResult
        mutating func submitAll() -> [Int32] {
            submitPending = false
            var ids: [Int32] = []
            while let request = machine.nextSubmission(into: &actions) {
                let id = nextStreamID
                nextStreamID += 2
                _ = machine.submitted(request, id: id, generation: generation, at: time)
                onWire[id] = Machine.InFlight(request: request, submittedAt: now, generation: generation)
                ids.append(id)
            }
            take()
            return ids
        }

        mutating func answer(_ id: Int32, _ outcome: ProviderOutcome) {
            let (_, entry) = machine.takeInFlight(id)!
            onWire[id] = nil
            machine.answered(entry, outcome, at: time, into: &actions)
            take()
        }

        mutating func reset(_ id: Int32, refused: Bool) {
            let (_, entry) = machine.takeInFlight(id)!
            onWire[id] = nil
            machine.unanswered(entry, refused: refused, reason: "StreamReset(CANCEL)", at: time, into: &actions)
            take()
        }

        mutating func close(error: (any Error)? = nil) {
            onWire.removeAll()
            machine.closed(error: error, at: time, into: &actions)
            take()
        }

        /// Advances the clock to the machine's next deadline (at most `limit`) and ticks.
        mutating func advance(by duration: Duration, lastReceivedAt: UInt64? = nil) {
            now &+= nanoseconds(duration)
            machine.tick(at: time, lastReceivedAt: lastReceivedAt ?? now, into: &actions)
            take()
        }

        mutating func tickAtDeadline(lastReceivedAt: UInt64? = nil) {
            guard let deadline = machine.nextDeadline else { return }
            now = max(now, deadline)
            machine.tick(at: time, lastReceivedAt: lastReceivedAt ?? now, into: &actions)
            take()
        }
    }

    static let delivered = ProviderOutcome.delivered(id: "id")

    @Test("a request the dialect cannot build is FAILED alone: no close, the next ones go out")
    func refusedRequestFailsAlone() {
        var rig = Rig()
        rig.enqueue(["t0", "t1", "t2"])
        rig.open()
        let first = rig.machine.nextSubmission(into: &rig.actions)!
        rig.machine.requestRefused(first, reason: "WebPush: token: not a subscription", into: &rig.actions)
        rig.take()
        #expect(rig.results["t0"]?.status == .failed)
        #expect(rig.results["t0"]?.reason == "WebPush: token: not a subscription")
        #expect(rig.results["t0"]?.code == .unsendable)
        #expect(rig.closes.isEmpty)
        #expect(rig.submitAll() == [1, 3])
    }

    @Test("work connects once; nothing is sent before the peer's settings; then up to its limit")
    func connectsAndRespectsLimit() {
        var rig = Rig()
        rig.enqueue((0..<5).map { "t\($0)" })
        #expect(rig.connects == 1)
        rig.enqueue(["t5"])
        #expect(rig.connects == 1, "one connect while one is under way")
        rig.machine.connecting(at: rig.time)
        rig.machine.connected(at: rig.time, into: &rig.actions)
        rig.take()
        #expect(rig.submitAll().isEmpty, "no settings yet")
        rig.machine.peerSettings(maxConcurrent: 2, into: &rig.actions)
        rig.take()
        #expect(rig.submitPending)
        #expect(rig.submitAll() == [1, 3])
        rig.answer(1, Self.delivered)
        #expect(rig.submitPending)
        #expect(rig.submitAll() == [5])
        #expect(rig.results["t0"]?.status == .delivered)
        #expect(rig.results["t0"]?.attempts == 1)
        #expect(rig.machine.peakInFlight == 2)
    }

    @Test(
        "GOAWAY: streams at or below last-stream-id are answered, those above come back and go again on the next connection without an attempt counted"
    )
    func goAwayAboveAndBelow() {
        var rig = Rig()
        rig.enqueue(["a", "b", "c", "d"])
        rig.open()
        #expect(rig.submitAll() == [1, 3, 5, 7])
        rig.machine.goAwayReceived("NO_ERROR Shutdown", at: rig.time, into: &rig.actions)
        rig.take()
        #expect(rig.machine.phase == .draining)
        rig.enqueue(["e"])
        #expect(rig.submitAll().isEmpty, "nothing new on a draining connection")
        rig.answer(1, Self.delivered)
        rig.answer(3, Self.delivered)
        rig.reset(5, refused: true)
        rig.reset(7, refused: true)
        #expect(rig.submitAll().isEmpty)
        rig.close()
        #expect(rig.connects == 1)
        rig.tickAtDeadline()
        #expect(rig.connects == 2, "the next connection is made on the next turn")
        rig.open()
        #expect(rig.submitAll().count == 3)
        rig.answer(9, Self.delivered)
        rig.answer(11, Self.delivered)
        rig.answer(13, Self.delivered)
        #expect(["c", "d", "e"].allSatisfy { rig.results[$0]?.attempts == 1 })
        #expect(rig.results.count == 5)
        #expect(rig.reports.contains { if case .goAway = $0 { true } else { false } })
    }

    @Test("REFUSED_STREAM: once at once, then spaced out by the backoff, then FAILED StreamRefused; reported once")
    func refusedStreams() {
        var rig = Rig { $0.retry.maxRefusals = 3 }
        rig.enqueue(["r"])
        rig.open()
        rig.reset(rig.submitAll()[0], refused: true)
        #expect(rig.submitAll().count == 1, "the first refusal goes again at once")
        rig.reset(rig.nextStreamID - 2, refused: true)
        #expect(rig.submitAll().isEmpty, "the second waits out a backoff")
        #expect(rig.machine.delayedCount == 1)
        var refusals = 2
        while rig.results["r"] == nil {
            rig.tickAtDeadline()
            let ids = rig.submitAll()
            guard let id = ids.first else { continue }
            rig.reset(id, refused: true)
            refusals += 1
        }
        #expect(refusals == 4)
        #expect(rig.results["r"]?.status == .failed)
        #expect(rig.results["r"]?.reason.hasPrefix("StreamRefused") == true)
        #expect(rig.results["r"]?.code == .streamRefused)
        #expect(rig.results["r"]?.attempts == 0, "never processed: no attempt counted")
        let refusing = rig.reports.filter { if case .refusing = $0 { true } else { false } }
        #expect(refusing.count == 1)
        #expect(rig.reports.contains { if case .refusedTooOften = $0 { true } else { false } })
    }

    @Test("MAX_CONCURRENT_STREAMS lowered to 0 holds the queue; raised again it flows")
    func streamLimitZeroAndBack() {
        var rig = Rig()
        rig.enqueue(["a", "b", "c"])
        rig.open(maxConcurrent: 1)
        #expect(rig.submitAll() == [1])
        rig.machine.peerSettings(maxConcurrent: 0, into: &rig.actions)
        rig.take()
        rig.answer(1, Self.delivered)
        #expect(rig.submitAll().isEmpty)
        rig.advance(by: .seconds(5))
        #expect(rig.submitAll().isEmpty)
        rig.machine.peerSettings(maxConcurrent: 10, into: &rig.actions)
        rig.take()
        #expect(rig.submitPending)
        #expect(rig.submitAll() == [3, 5])
        #expect(rig.closes.isEmpty)
    }

    @Test("a peer that allows 0 streams for the stall timeout is given up, and the work goes to the next connection")
    func stallWithZeroStreams() {
        var rig = Rig {
            $0.stallTimeout = .seconds(30)
            $0.pingInterval = .seconds(60)
            $0.pingTimeout = .seconds(10)
        }
        rig.enqueue(["a"])
        rig.open(maxConcurrent: 0)
        for _ in 0..<5 where rig.closes.isEmpty { rig.tickAtDeadline() }
        #expect(rig.closes.count == 1)
        #expect(rig.closes.first?.contains("the provider allows 0 streams") == true)
        #expect(rig.reports.contains { if case .stalled = $0 { true } else { false } })
        rig.close(error: TransportError(rig.closes[0]))
        rig.tickAtDeadline()
        #expect(rig.connects == 2)
        rig.open()
        #expect(rig.submitAll().count == 1)
        #expect(rig.results.isEmpty, "nothing was lost")
    }

    @Test("PING after the quiet interval; no byte back within the PING timeout closes; bytes back clear it")
    func pingTimeout() {
        var rig = Rig {
            $0.pingInterval = .seconds(20)
            $0.pingTimeout = .seconds(5)
        }
        rig.enqueue(["a"])
        rig.open()
        rig.answer(rig.submitAll()[0], Self.delivered)
        let quietSince = rig.now
        rig.advance(by: .seconds(21), lastReceivedAt: quietSince)
        #expect(rig.pings == 1)
        // An answer to the PING (any byte) clears it.
        rig.advance(by: .seconds(5), lastReceivedAt: rig.now)
        #expect(rig.closes.isEmpty)
        let silentSince = rig.now
        rig.advance(by: .seconds(21), lastReceivedAt: silentSince)
        #expect(rig.pings == 2)
        rig.advance(by: .seconds(5), lastReceivedAt: silentSince)
        rig.advance(by: .seconds(5), lastReceivedAt: silentSince)
        #expect(rig.closes == ["no answer to PING: connection presumed dead"])
        #expect(rig.reports.contains { if case .pingTimeout = $0 { true } else { false } })
    }

    @Test("Retry-After holds a request back that long; longer than max_retry_after FAILs it now")
    func retryAfter() {
        var rig = Rig { $0.retry.maxRetryAfter = .seconds(60) }
        rig.enqueue(["a", "b"])
        rig.open()
        let ids = rig.submitAll()
        rig.answer(
            ids[0], .transient(reason: "TooManyRequests", httpStatus: 429, retry: .afterBackoff(notBefore: .seconds(3)))
        )
        rig.answer(
            ids[1],
            .transient(reason: "TooManyRequests", httpStatus: 429, retry: .afterBackoff(notBefore: .seconds(61))))
        #expect(rig.results["b"]?.status == .failed)
        #expect(rig.results["b"]?.reason == "TooManyRequests")
        #expect(rig.results["b"]?.code == .providerUnavailable)
        rig.advance(by: .milliseconds(2_900))
        #expect(rig.submitAll().isEmpty)
        rig.advance(by: .milliseconds(100))
        #expect(rig.submitAll().count == 1)
        rig.answer(rig.nextStreamID - 2, Self.delivered)
        #expect(rig.results["a"]?.status == .delivered)
        #expect(rig.results["a"]?.attempts == 2)
    }

    @Test(
        "a refused credential: every request that saw it asks for a renewal and goes once more; a second refusal rejects"
    )
    func credentialRefusalStorm() {
        var rig = Rig()
        let tokens = (0..<50).map { "t\($0)" }
        rig.enqueue(tokens)
        rig.open()
        let refused = ProviderOutcome.transient(
            reason: "ExpiredProviderToken", httpStatus: 403, retry: .afterRenewingAuthorization)
        for id in rig.submitAll() { rig.answer(id, refused) }
        #expect(rig.renewals.count == 50)
        #expect(Set(rig.renewals) == [1], "all for the one generation: the dialect renews once")
        rig.generation = 2
        let again = rig.submitAll()
        #expect(again.count == 50)
        for id in again.prefix(49) { rig.answer(id, Self.delivered) }
        rig.answer(again[49], refused)
        #expect(rig.results.count == 50)
        #expect(rig.results["t49"]?.status == .rejected)
        #expect(rig.results["t49"]?.code == .unauthenticated, "refused again after the renewal")
        #expect(rig.results["t0"]?.status == .delivered)
        #expect(rig.submitAll().isEmpty)
    }

    @Test("a connection lost under requests retries them with backoff, counting attempts, up to max_attempts")
    func connectionLost() {
        var rig = Rig { $0.retry.maxAttempts = 2 }
        rig.enqueue(["a"])
        rig.open()
        rig.submitAll()
        rig.close(error: TransportError("reset"))
        #expect(rig.results.isEmpty)
        #expect(rig.machine.delayedCount == 1)
        rig.tickAtDeadline()
        #expect(rig.connects == 2)
        rig.open()
        for _ in 0..<3 where rig.submitAll().isEmpty { rig.tickAtDeadline() }
        rig.close(error: TransportError("reset"))
        #expect(rig.results["a"]?.status == .failed)
        #expect(rig.results["a"]?.reason == "ConnectionLost")
        #expect(rig.results["a"]?.code == .connectionLost)
        #expect(rig.results["a"]?.attempts == 2)
    }

    @Test("connect failures back off, and past max_connect_attempts what waits is FAILED ProviderUnreachable")
    func unreachable() {
        var rig = Rig { $0.maxConnectAttempts = 3 }
        rig.enqueue(["a", "b"])
        for attempt in 1...3 {
            #expect(rig.connects == attempt)
            rig.machine.connecting(at: rig.time)
            rig.machine.connectFailed(TransportError("refused"), at: rig.time, into: &rig.actions)
            rig.take()
            if attempt < 3 {
                #expect(rig.machine.nextDeadline! > rig.now, "a backoff before the next attempt")
                rig.tickAtDeadline()
            }
        }
        #expect(rig.results["a"]?.reason == "ProviderUnreachable: refused")
        #expect(rig.results["a"]?.code == .unreachable)
        #expect(rig.results["b"]?.status == .failed)
        rig.enqueue(["c"])
        #expect(rig.connects == 3, "new work waits out the connect backoff: no redial storm")
        rig.tickAtDeadline()
        #expect(rig.connects == 4, "then tries again")
        rig.machine.connecting(at: rig.time)
        rig.machine.connectFailed(TransportError("refused"), at: rig.time, into: &rig.actions)
        rig.take()
        #expect(rig.results["c"]?.reason == "ProviderUnreachable: refused", "still unreachable: FAILED at once")
        #expect(rig.results["c"]?.code == .unreachable)
    }

    @Test("a TLS handshake that does not finish within the connect timeout is closed")
    func handshakeTimeout() {
        var rig = Rig { $0.connectTimeout = .seconds(2) }
        rig.enqueue(["a"])
        rig.machine.connecting(at: rig.time)
        rig.advance(by: .seconds(1))
        #expect(rig.closes.isEmpty)
        rig.advance(by: .seconds(1))
        #expect(rig.closes == ["the TLS handshake did not finish in time"])
        rig.close()
        #expect(rig.reports.contains { if case .connectFailed = $0 { true } else { false } })
    }

    @Test("shutdown fails what waits and what waits out a backoff; later work fails at once")
    func shutdown() {
        var rig = Rig()
        rig.enqueue(["a", "b", "c"])
        rig.open(maxConcurrent: 2)
        let ids = rig.submitAll()
        rig.answer(
            ids[0], .transient(reason: "InternalServerError", httpStatus: 500, retry: .afterBackoff(notBefore: nil)))
        rig.submitAll()
        #expect(rig.machine.delayedCount == 1)
        rig.machine.shutDown(into: &rig.actions)
        rig.take()
        #expect(rig.closes == ["graceful"])
        #expect(rig.results["a"]?.reason == "Shutdown")
        rig.close()
        #expect(rig.results.count == 3)
        #expect(rig.results.values.allSatisfy { $0.reason == "Shutdown" && $0.code == .shutdown })
        rig.enqueue(["d"])
        #expect(rig.results["d"]?.reason == "Shutdown")
        #expect(rig.connects == 1)
    }

    @Test("an expired notification is not retried")
    func expired() {
        var rig = Rig()
        let job = Job(tokens: 1, expiration: rig.unixSeconds + 1)
        rig.enqueue(["a"], job: job)
        rig.open()
        rig.unixSeconds += 2
        rig.answer(
            rig.submitAll()[0],
            .transient(reason: "ServiceUnavailable", httpStatus: 503, retry: .afterBackoff(notBefore: nil)))
        #expect(rig.results["a"]?.reason == "Expired")
        #expect(rig.results["a"]?.code == .expired)
    }

    @Test(
        "without PING (HTTP/1.1): no PING is asked for; an idle connection is closed after the ping interval, a busy one is not"
    )
    func http1Liveness() {
        var rig = Rig {
            $0.pingInterval = .seconds(20)
            $0.pingTimeout = .seconds(5)
        }
        rig.enqueue(["a"])
        rig.machine.connecting(at: rig.time)
        rig.machine.connected(at: rig.time, pings: false, into: &rig.actions)
        rig.machine.peerSettings(maxConcurrent: 1, into: &rig.actions)
        rig.take()
        let id = rig.submitAll()[0]
        let quietSince = rig.now
        // A request in flight and no byte for longer than the ping interval: no PING, no close
        // (only the stall watch may give it up).
        rig.advance(by: .seconds(25), lastReceivedAt: quietSince)
        #expect(rig.pings == 0 && rig.closes.isEmpty)
        rig.answer(id, Self.delivered)
        let idleSince = rig.now
        rig.advance(by: .seconds(10), lastReceivedAt: idleSince)
        #expect(rig.closes.isEmpty)
        rig.advance(by: .seconds(11), lastReceivedAt: idleSince)
        rig.advance(by: .seconds(5), lastReceivedAt: idleSince)
        #expect(rig.closes == ["graceful"], "idle past the ping interval: closed, quietly")
        #expect(rig.pings == 0)
        #expect(rig.reports.isEmpty)
        rig.close()
        rig.enqueue(["b"])
        #expect(rig.connects == 2, "opened again on demand")
    }

    @Test(
        "a peer closing after this answer (Connection: close): nothing more goes on it; the next connection takes the rest"
    )
    func peerClosing() {
        var rig = Rig()
        rig.enqueue(["a", "b"])
        rig.open(maxConcurrent: 1)
        let first = rig.submitAll()
        #expect(first.count == 1)
        rig.machine.peerClosing()
        rig.answer(first[0], Self.delivered)
        #expect(rig.submitAll().isEmpty, "draining")
        rig.close()
        rig.tickAtDeadline()
        #expect(rig.connects == 2)
        rig.open(maxConcurrent: 1)
        rig.answer(rig.submitAll()[0], Self.delivered)
        #expect(rig.results["b"]?.status == .delivered && rig.results["b"]?.attempts == 1)
        #expect(rig.reports.isEmpty, "an announced close is no warning")
    }

    @Test("the due queue hands out in due order, ties in insertion order")
    func dueQueue() {
        var queue = DueQueue<Int>()
        for (value, due) in [(1, 30), (2, 10), (3, 20), (4, 10), (5, 40)] { queue.insert(value, due: UInt64(due)) }
        #expect(queue.nextDue == 10)
        #expect(queue.popDue(now: 5) == nil)
        var out: [Int] = []
        while let value = queue.popDue(now: 35) { out.append(value) }
        #expect(out == [2, 4, 3, 1])
        #expect(queue.count == 1)
    }

    @Test("removing from the due queue by a test keeps the rest in due order, ties in insertion order")
    func dueQueueRemoveWhere() {
        var queue = DueQueue<Int>()
        for (value, due) in [(1, 30), (2, 10), (3, 20), (4, 10), (5, 40), (6, 20), (7, 5)] {
            queue.insert(value, due: UInt64(due))
        }
        #expect(queue.removeAll { $0 % 2 == 1 && $0 != 3 }.sorted() == [1, 5, 7])
        #expect(queue.count == 4 && queue.nextDue == 10)
        var out: [Int] = []
        while let value = queue.popDue(now: 100) { out.append(value) }
        #expect(out == [2, 4, 3, 6])
        #expect(queue.removeAll { _ in true }.isEmpty)
    }
}
