import PushCore
import PushTLS
import PushTransport
import Testing

@testable import PushDelivery

/// Issue #46: a provider that ends the connection during or right after the handshake (a TLS
/// alert, a close before its first answer, a GOAWAY before any stream was answered) is a failed
/// connect with backoff, and what waits is FAILED naming why. Driven without sockets.
@Suite("Provider connection state machine: refused handshakes")
struct ConnectionRefusalTests {
    typealias Rig = ProviderConnectionMachineTests.Rig

    static func alert(_ code: UInt8) -> TLSError {
        TLSError(.connection, "SSL_read failed (SSL_ERROR_SSL)", alert: TLSAlert(code: code))
    }

    /// TLS 1.3: the client's handshake is done (`connected`) before the server judged the client
    /// certificate; the server's verdict comes as an alert that closes the connection.
    static func connectThenClose(_ rig: inout Rig, error: (any Error)?) {
        rig.machine.connecting(at: rig.time)
        rig.machine.connected(at: rig.time, into: &rig.actions)
        rig.take()
        rig.close(error: error)
    }

    /// The labels of the refusals reported, in order.
    static func refusals(_ rig: Rig) -> [String] {
        rig.reports.compactMap { if case .refused(let refusal) = $0 { refusal.label } else { nil } }
    }

    @Test("an alert about our certificate right after the TLS 1.3 handshake: FAILED at once, naming it; backoff")
    func certificateAlertAfterHandshake() {
        var rig = Rig()
        rig.enqueue(["a"])
        Self.connectThenClose(&rig, error: Self.alert(45))
        let reason = "ProviderUnreachable: the provider refused our client certificate (certificate_expired)"
        #expect(rig.results["a"]?.status == .failed)
        #expect(rig.results["a"]?.reason == reason)
        #expect(rig.results["a"]?.attempts == 0)
        #expect(rig.machine.nextDeadline.map { $0 > rig.now } == true, "the reconnect waits out a backoff")
        #expect(rig.connects == 1)
        rig.enqueue(["b"])
        #expect(rig.results["b"]?.reason == reason, "new work during the backoff fails at once, not after a timeout")
        #expect(rig.connects == 1, "and does not redial")
        #expect(Self.refusals(rig) == ["certificate_expired"])
        rig.tickAtDeadline()
        rig.enqueue(["c"])
        #expect(rig.connects == 2, "after the backoff, new work tries again")
    }

    @Test("every alert that judges our certificate is a refusal of it; other alerts are not")
    func alertClassification() {
        for code: UInt8 in [42, 43, 44, 45, 46, 48, 49, 116] {
            #expect(TLSAlert(code: code).refusesCertificate, "alert \(code)")
        }
        for code: UInt8 in [40, 80, 70, 112, 120] {
            #expect(!TLSAlert(code: code).refusesCertificate, "alert \(code)")
        }
        #expect(TLSAlert(code: 48).name == "unknown_ca")
        #expect(TLSAlert(code: 116).name == "certificate_required")
        #expect(TLSAlert(code: 200).name == "alert_200")
    }

    @Test("a close before the first SETTINGS without an alert: backoff growing and bounded; FAILED after the attempts")
    func closeBeforeSettings() {
        var rig = Rig {
            $0.maxConnectAttempts = 3
            $0.retry.initialBackoff = .milliseconds(200)
            $0.retry.maxBackoff = .seconds(1)
        }
        rig.enqueue(["a"])
        var delays: [UInt64] = []
        for attempt in 1...6 {
            #expect(rig.connects == attempt)
            Self.connectThenClose(&rig, error: nil)
            if attempt < 3 { #expect(rig.results["a"] == nil, "held until max_connect_attempts") }
            let deadline = rig.machine.nextDeadline!
            delays.append(deadline - rig.now)
            rig.tickAtDeadline()
            if attempt >= 3 { rig.enqueue(["n\(attempt)"]) }
            #expect(rig.connects == attempt + 1)
        }
        #expect(
            rig.results["a"]?.reason.hasPrefix("ProviderUnreachable: the provider closed the connection right after")
                == true)
        // Jitter in [½, 1] of 200, 400, 800, then 1000 ms (bounded).
        #expect(delays[0] >= 100_000_000 && delays[0] <= 200_000_000)
        #expect(delays[2] >= 400_000_000 && delays[2] <= 800_000_000)
        #expect(delays[5] >= 500_000_000 && delays[5] <= 1_000_000_000)
        #expect(Self.refusals(rig) == Array(repeating: "closed", count: 6), "each reported")
    }

    @Test("TLS 1.2: an alert in the handshake itself (unknown_ca) is the same refusal")
    func alertDuringHandshake() {
        var rig = Rig()
        rig.enqueue(["a"])
        rig.machine.connecting(at: rig.time)
        rig.close(error: TLSError(.handshake, "TLS handshake failed", alert: TLSAlert(code: 48)))
        #expect(
            rig.results["a"]?.reason == "ProviderUnreachable: the provider refused our client certificate (unknown_ca)")
        #expect(rig.machine.nextDeadline.map { $0 > rig.now } == true)
    }

    @Test("APNs: SETTINGS, then GOAWAY BadCertificate before any answer: the refused stream FAILS naming it")
    func goAwayBadCertificate() {
        var rig = Rig()
        rig.enqueue(["a"])
        rig.open(maxConcurrent: 1)
        let ids = rig.submitAll()
        rig.machine.goAwayReceived(#"NO_ERROR {"reason":"BadCertificate"}"#, at: rig.time, into: &rig.actions)
        rig.take()
        rig.reset(ids[0], refused: true)
        rig.close()
        #expect(
            rig.results["a"]?.reason.hasPrefix(
                "ProviderUnreachable: the provider refused our client certificate (GOAWAY") == true)
        #expect(rig.machine.nextDeadline.map { $0 > rig.now } == true, "backoff")
        #expect(Self.refusals(rig) == ["goaway"])
    }

    @Test("a GOAWAY after answers is the ordinary graceful kind: the next connection is made at once")
    func goAwayAfterAnswers() {
        var rig = Rig()
        rig.enqueue(["a", "b"])
        rig.open(maxConcurrent: 1)
        let first = rig.submitAll()
        rig.answer(first[0], ProviderConnectionMachineTests.delivered)
        rig.machine.goAwayReceived("NO_ERROR Shutdown", at: rig.time, into: &rig.actions)
        rig.take()
        rig.close()
        #expect(Self.refusals(rig).isEmpty)
        #expect(rig.machine.nextDeadline == rig.now, "reconnects on the next turn, no backoff")
    }

    @Test("a GOAWAY long after the connection was made, nothing ever asked on it, is an idle goodbye, not a refusal")
    func idleGoAwayIsNoRefusal() {
        var rig = Rig()
        rig.open(maxConcurrent: 100)
        rig.advance(by: .seconds(3600))
        rig.machine.goAwayReceived("NO_ERROR idle", at: rig.time, into: &rig.actions)
        rig.take()
        rig.close()
        #expect(Self.refusals(rig).isEmpty)
        // The same reason early is a refusal; a certificate reason late still is.
        var early = Rig()
        early.open(maxConcurrent: 100)
        early.machine.goAwayReceived("NO_ERROR idle", at: early.time, into: &early.actions)
        early.take()
        early.close()
        #expect(Self.refusals(early) == ["goaway"])
        var late = Rig()
        late.open(maxConcurrent: 100)
        late.advance(by: .seconds(3600))
        late.machine.goAwayReceived(
            #"NO_ERROR {"reason":"BadCertificateEnvironment"}"#, at: late.time, into: &late.actions)
        late.take()
        late.close()
        #expect(Self.refusals(late) == ["goaway"])
    }

    @Test("HTTP/1.1: the request lost with a refused connection FAILS with the refusal's reason")
    func http1LostRequest() {
        var rig = Rig()
        rig.enqueue(["a"])
        rig.machine.connecting(at: rig.time)
        rig.machine.connected(at: rig.time, pings: false, into: &rig.actions)
        rig.machine.peerSettings(maxConcurrent: 1, into: &rig.actions)
        rig.take()
        #expect(rig.submitAll().count == 1)
        rig.close(error: Self.alert(44))
        #expect(
            rig.results["a"]?.reason
                == "ProviderUnreachable: the provider refused our client certificate (certificate_revoked)")
    }

    @Test("a connection that served resets the connect backoff: its close redials at once")
    func servedConnectionResets() {
        var rig = Rig()
        rig.enqueue(["a"])
        Self.connectThenClose(&rig, error: Self.alert(40))
        #expect(rig.results.isEmpty, "handshake_failure may pass: held for the next attempts")
        rig.tickAtDeadline()
        rig.open()
        let ids = rig.submitAll()
        rig.answer(ids[0], ProviderConnectionMachineTests.delivered)
        #expect(rig.results["a"]?.status == .delivered)
        rig.enqueue(["b"])
        rig.close(error: TransportError("reset"))
        #expect(rig.machine.nextDeadline == rig.now)
    }
}
