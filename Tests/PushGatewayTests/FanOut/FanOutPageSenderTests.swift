import PushCore
import PushDelivery
import PushPosix
import PushStore
import Testing

@testable import PushGateway

/// One app's share of a page through its client: reserved and sent in slices the app's queue can
/// hold, so a chunk's held recipients (up to a chunk's worth, sent again at once) never wait for a
/// reservation larger than the queue.
@Suite("Fan-out page sender", .timeLimit(.minutes(1)))
struct FanOutPageSenderTests {
    @Test("a share larger than the queue goes in slices of maxShare, every recipient counted")
    func sharesLargerThanTheQueueGoInSlices() async throws {
        let client = FakeDeliveryClient(name: "app", capacity: 2)
        let send = try NotificationDeliveryTests.Rig().send([(app: "a", tokens: [NotificationDeliveryTests.token])])
        let template = try #require(send.items[0].notification)
        let sender = FanOutPageSender(
            events: DeliveryEvents(log: Log(level: .error), logTokens: false), metrics: nil, holds: false,
            maxShare: 2)
        let recipients = (0..<5).map { FanOutChunkMachineTests.target("r\($0)") }
        let page = FanOutPageSender.PreparedPage(
            counts: FanOutCounts(total: 5), deliveries: [(template, recipients, client, nil)])

        let counts = await sender.sendPage(page, messageID: "m1")

        #expect(counts.delivered == 5)
        #expect(client.sent.map(\.push.tokens.count) == [2, 2, 1])
        #expect(client.sent.flatMap(\.push.tokens) == recipients.map(\.endpoint.token))
        #expect(client.heldRequests == 0)
    }

    static func sender() -> FanOutPageSender {
        FanOutPageSender(
            events: DeliveryEvents(log: Log(level: .error), logTokens: false), metrics: nil, holds: false,
            maxShare: 10)
    }

    @Test("a page all of one app, every recipient sent, is its own share, in order")
    func oneAppPageIsItsOwnShare() throws {
        var plan = try MessagePlanTests.plan("hi")
        let targets = (0..<4).map { MessagePlanTests.target(app: "ios", policy: "", id: "e\($0)") }
        let page = Self.sender().prepare(
            targets, plan: &plan, clients: ["ios": FakeDeliveryClient(name: "ios")], messageID: "m")
        #expect(page.deliveries.count == 1)
        #expect(page.deliveries.first?.recipients == targets)
        #expect(page.counts == FanOutCounts(total: 4))
    }

    @Test("a mixed page: a share per app in page order; disabled skipped, unconfigured apps failed")
    func mixedPageIsSortedIntoShares() throws {
        var plan = try MessagePlanTests.plan("hi")
        var disabled = MessagePlanTests.target(app: "ios", policy: "", id: "c")
        disabled.endpoint.enabled = false
        let targets = [
            MessagePlanTests.target(app: "ios", policy: "", id: "a"),
            MessagePlanTests.target(app: "fire", policy: "", id: "b"), disabled,
            MessagePlanTests.target(app: "gone", policy: "", id: "d"),
            MessagePlanTests.target(app: "ios", policy: "", id: "e"),
        ]
        let clients: [String: any DeliveryClient] = [
            "ios": FakeDeliveryClient(name: "ios"), "fire": FakeDeliveryClient(name: "fire"),
        ]
        let page = Self.sender().prepare(targets, plan: &plan, clients: clients, messageID: "m")
        #expect(page.deliveries.map { $0.recipients.map(\.endpoint.id) } == [["a", "e"], ["b"]])
        #expect(page.counts.total == 5 && page.counts.skipped == 1 && page.counts.failed == 1)
        #expect(page.counts.records.deliveries.map(\.endpointID) == ["d"])
    }

    @Test("successes nobody watches still reach the delivery log as sampled: all at 100 %, none at 0")
    func quietSuccessesFollowTheSample() async throws {
        let send = try NotificationDeliveryTests.Rig().send([(app: "a", tokens: [NotificationDeliveryTests.token])])
        let template = try #require(send.items[0].notification)
        let recipients = (0..<3).map { FanOutChunkMachineTests.target("r\($0)") }
        for (percent, rows) in [(100.0, 3), (0.0, 0)] {
            var sender = Self.sender()
            sender.deliveryLog.successSamplePercent = percent
            let page = FanOutPageSender.PreparedPage(
                counts: FanOutCounts(total: 3), deliveries: [(template, recipients, FakeDeliveryClient(name: "a"), nil)]
            )
            let counts = await sender.sendPage(page, messageID: "m")
            #expect(counts.delivered == 3)
            #expect(counts.records.deliveries.map(\.endpointID) == Array(recipients.map(\.endpoint.id).prefix(rows)))
        }
    }
}
