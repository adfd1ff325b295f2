import PushCore
import PushProto
import PushTestSupport
import Testing

@testable import PushGateway
@testable import PushStore

/// How a worker goes from chunk to chunk, against a real store (SQLite in a temporary directory)
/// and a delivery client that holds its answers.
@Suite("Fan-out workers", .timeLimit(.minutes(1)))
struct FanOutWorkerTests {
    /// A chunk that has read its last page lets its worker claim the next one while its own sends
    /// wait for answers (no drain at every chunk boundary), and a worker holds at most two chunks:
    /// with one worker, chunks of 2 and no answers, 4 of 6 recipients are sent, not 2 and not 6,
    /// and the third chunk is not even claimed (its lease would run with nobody renewing it).
    @Test func aWorkerClaimsTheNextChunkWhileTheLastPagesOfOneAreAnsweredButHoldsNoMoreThanTwo() async throws {
        let rig = try await Rig(chunkSize: 2)
        defer { rig.directory.remove() }
        let (store, client, fanOut, service) = (rig.store, rig.client, rig.fanOut, rig.service)
        _ = try await store.bulkCreateSubscribed(
            topic: "news", app: "ios", tokens: (1...6).map { TestTokens.hex64($0) }, now: 0)
        var request = PushgateV1.PublishRequest()
        request.topic = "news"
        request.message = "hello"
        let id = try await service.publish(request, caller: .admin).messageID

        func sentTokens() -> Int { client.sent.reduce(0) { $0 + $1.push.tokens.count } }
        try await eventually { sentTokens() == 4 }
        // The worker's third chunk waits for one of its two to end, unclaimed.
        try await Task.sleep(for: .milliseconds(200))
        #expect(sentTokens() == 4)
        let claimed = try await store.withDatabase { database throws(StoreError) in
            try database.rows("SELECT count(*) FROM fanout_chunks", []) { $0.int64(0) }
        }
        #expect(claimed == [2])

        client.answerHeld()
        try await eventually { (try? await store.message(id: id))?.state == .completed }
        let message = try await store.message(id: id)
        #expect(message.delivered == 6)
        #expect(sentTokens() == 6)
        fanOut.stop()
        await fanOut.drain()
        await store.close()
    }

    /// A Publish while the only worker waits for its last chunk's answers (its claim found nothing
    /// more) is worked as soon as that chunk ends, not at the next poll (none runs here).
    @Test func aPublishWhileTheWorkerFinishesATailIsWorkedWhenItEnds() async throws {
        let rig = try await Rig(chunkSize: FanOutSettings().chunkSize)
        defer { rig.directory.remove() }
        let (store, client, fanOut, service) = (rig.store, rig.client, rig.fanOut, rig.service)
        _ = try await store.bulkCreateSubscribed(
            topic: "first", app: "ios", tokens: [TestTokens.hex64(1), TestTokens.hex64(2)], now: 0)
        _ = try await store.bulkCreateSubscribed(topic: "second", app: "ios", tokens: [TestTokens.hex64(3)], now: 0)
        var request = PushgateV1.PublishRequest()
        request.message = "hello"
        request.topic = "first"
        let first = try await service.publish(request, caller: .admin).messageID
        try await eventually { client.sent.count == 1 }
        // The worker's claim after the first chunk found nothing; it waits for the chunk's answers.
        try await Task.sleep(for: .milliseconds(100))
        request.topic = "second"
        let second = try await service.publish(request, caller: .admin).messageID
        try await Task.sleep(for: .milliseconds(100))
        #expect(client.sent.count == 1)

        client.answerHeld()
        for id in [first, second] {
            try await eventually { (try? await store.message(id: id))?.state == .completed }
        }
        #expect(try await store.message(id: second).delivered == 1)
        fanOut.stop()
        await fanOut.drain()
        await store.close()
    }

    /// An APNs app `ios` whose client holds its answers, a store, one fan-out worker reading pages
    /// of 2 with chunks of `chunkSize`, and a publish service (its fan-out started by each Publish;
    /// no poll runs).
    struct Rig {
        let directory: TemporaryDirectory
        let store: SQLiteStore
        let client = FakeDeliveryClient(name: "ios", capacity: 100, answers: false)
        let fanOut: FanOut
        let service: PublishService

        init(chunkSize: Int) async throws {
            directory = try TemporaryDirectory()
            store = try await SQLiteStore.open(path: directory.path(of: "store.sqlite"))
            var configuration = GatewayConfiguration()
            configuration.apps = [AppConfiguration(name: "ios", bundleID: "com.example.ios")]
            let live = LiveSettings(configuration: configuration, clients: ["ios": client], metrics: nil)
            var settings = FanOutSettings()
            settings.workers = 1
            settings.chunkSize = chunkSize
            fanOut = FanOut(
                store: store, live: live, events: DeliveryEvents(log: Log(level: .error), logTokens: false),
                log: Log(level: .error), pageSize: 2, settings: settings)
            service = PublishService(live: live, store: store, fanOut: fanOut)
        }
    }

    /// Polls `condition` every 10 ms for up to 10 s.
    private func eventually(_ condition: () async -> Bool) async throws {
        for _ in 0..<1000 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the condition never held")
    }
}
