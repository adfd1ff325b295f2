import PushCore
import Testing

@testable import PushDelivery

extension ProviderConnectionMachineTests {
    @Test("a refused address REJECTS what waits at once with the reason: no backoff, no retry, no reconnect")
    func addressRefused() {
        var rig = Rig { $0.maxConnectAttempts = 3 }
        rig.enqueue(["a", "b"])
        #expect(rig.connects == 1)
        rig.machine.connecting(at: rig.time)
        let reason =
            "the push service host example.com resolved to 10.0.0.1, a private address "
            + "(set allow_private_addresses to allow)"
        rig.machine.connectRefused(reason: reason, into: &rig.actions)
        rig.take()
        #expect(rig.results["a"]?.status == .rejected)
        #expect(rig.results["a"]?.reason == reason)
        #expect(rig.results["a"]?.code == .addressRefused)
        #expect(rig.results["b"]?.status == .rejected)
        #expect(rig.results["a"]?.invalidatesToken == false, "DNS may change: the subscription is kept")
        #expect(rig.machine.nextDeadline == nil, "nothing to retry, no reconnect pending")
        #expect(
            rig.reports.contains {
                if case .addressRefused(reason, requests: 2) = $0 { true } else { false }
            })
        #expect(rig.reports.first?.protection == .privateAddressRefused)
        rig.enqueue(["c"])
        #expect(rig.connects == 2, "new work asks again (the answer may have changed)")
    }
}
