import PushCore
import PushTransport
import Testing

@testable import PushDelivery

@Suite("Delivery collector, endpoints, retry policy")
struct DeliveryCollectorTests {
    @Test("the collector answers when all results are in, or at the deadline with the rest FAILED")
    func collector() async {
        let placeholders = (0..<3).map { DeliveryResult(notificationIndex: 0, token: "t\($0)", status: .failed) }
        let collector = DeliveryCollector(placeholders: placeholders)
        collector.complete(slot: 1, with: DeliveryResult(notificationIndex: 0, token: "t1", status: .delivered))
        let results = await collector.results(deadline: .now + .milliseconds(50))
        #expect(results.map(\.status) == [.failed, .delivered, .failed])
        #expect(results[0].reason == "DeadlineExceeded")
        collector.complete(slot: 0, with: DeliveryResult(notificationIndex: 0, token: "t0", status: .delivered))
        #expect(collector.isFinished)

        let quick = DeliveryCollector(placeholders: placeholders)
        for slot in 0..<3 {
            quick.complete(
                slot: slot, with: DeliveryResult(notificationIndex: 0, token: "t\(slot)", status: .delivered))
        }
        #expect(await quick.results(deadline: nil).allSatisfy { $0.status == .delivered })
    }

    @Test("provider URLs: endpoint and path")
    func urls() throws {
        let (endpoint, path) = try #require(HTTPSOrigin.parse(url: "https://oauth2.googleapis.com/token"))
        #expect(endpoint == HTTPSOrigin(host: "oauth2.googleapis.com", port: 443))
        #expect(path == "/token")
        #expect(HTTPSOrigin.parse(url: "https://127.0.0.1:9443")?.path == "/")
        #expect(HTTPSOrigin.parse(url: "https://x/token?a=b") == nil)
        #expect(HTTPSOrigin.parse(url: "http://x/token") == nil)
        #expect(HTTPSOrigin(url: "https://x/token") == nil, "a provider host takes no path")
    }
}
