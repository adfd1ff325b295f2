import PushTLS
import Testing

@testable import PushDelivery

/// What an origin's connections share about a provider refusing them (issue #46): the gate that
/// fails requests at once while a certificate refusal's backoff runs, and the log throttle.
@Suite("Origin refusal gate")
struct OriginRefusalGateTests {
    static let second: UInt64 = 1_000_000_000
    static let policy = RetryPolicy(initialBackoff: .milliseconds(200), maxBackoff: .seconds(5))
    static let expired = ConnectionRefusal(cause: .alert(TLSAlert(code: 45)))
    static let closed = ConnectionRefusal(cause: .closed(nil))

    @Test("a certificate refusal closes the gate for a backoff growing with the refusals, bounded; others do not")
    func closesForBackoff() {
        var gate = OriginRefusalGate()
        var now: UInt64 = 100 * Self.second
        #expect(gate.rejection(at: now) == nil)
        _ = gate.refused(Self.closed, at: now, policy: Self.policy, logInterval: .seconds(60), unit: 1)
        #expect(gate.rejection(at: now) == nil, "a close without an alert may be transient: not gated")
        var spans: [UInt64] = []
        for _ in 0..<8 {
            _ = gate.refused(Self.expired, at: now, policy: Self.policy, logInterval: .seconds(60), unit: 1)
            #expect(
                gate.rejection(at: now)
                    == "ProviderUnreachable: the provider refused our client certificate (certificate_expired)")
            spans.append(gate.closedUntilNanoseconds - now)
            now = gate.closedUntilNanoseconds
            #expect(gate.rejection(at: now) == nil, "open again once the backoff is over")
        }
        // Refusals 2…9 of the run, unit 1: 400 ms, 800 ms, … doubling, then 5 s.
        #expect(Array(spans.prefix(4)) == [400, 800, 1600, 3200].map { UInt64($0) * 1_000_000 })
        #expect(spans.suffix(4).allSatisfy { $0 == 5 * Self.second })
    }

    @Test("logged when a run starts, when the cause changes, then once per interval with the count since")
    func logThrottle() {
        var gate = OriginRefusalGate()
        var now: UInt64 = 100 * Self.second
        var verdicts: [(Bool, Int)] = []
        for _ in 0..<5 {
            verdicts.append(
                gate.refused(Self.expired, at: now, policy: Self.policy, logInterval: .seconds(10), unit: 0))
            now += 4 * Self.second
        }
        #expect(verdicts.map(\.0) == [true, false, false, true, false])
        #expect(verdicts[3].1 == 3, "the line stands for the 3 refusals since the last")
        #expect(
            gate.refused(Self.closed, at: now, policy: Self.policy, logInterval: .seconds(10), unit: 0) == (true, 2))
        now += 21 * Self.second  // more than 4 × maxBackoff: a new run
        #expect(
            gate.refused(Self.closed, at: now, policy: Self.policy, logInterval: .seconds(10), unit: 0) == (true, 1))
    }
}
