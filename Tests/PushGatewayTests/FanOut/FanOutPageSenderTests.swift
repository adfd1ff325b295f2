import PushCore
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
}
