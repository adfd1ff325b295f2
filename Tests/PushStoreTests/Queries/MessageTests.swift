import PushStore
import Testing

@Suite("Messages")
struct MessageTests {
    private func topicMessage(_ id: String, at time: Int64 = 100) -> MessageRecord {
        MessageRecord(
            id: id, topic: "news", message: #"{"default":"hi"}"#, messageStructure: "json",
            attributes: ["AWS.SNS.MOBILE.APNS.PUSH_TYPE": "alert", "kind": "breaking"], publishedAt: time)
    }

    @Test("a message reads back as inserted, attributes included", arguments: StoreEngine.available)
    func roundTrip(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let m = topicMessage("m1")
            try await store.insertMessage(m)
            #expect(try await store.message(id: "m1") == m)
            let direct = MessageRecord(id: "m2", endpointID: "e1", message: "plain", publishedAt: 5)
            try await store.insertMessage(direct)
            #expect(try await store.message(id: "m2") == direct)
            #expect(
                await storeError { () async throws(StoreError) in try await store.message(id: "m3") }?.code == .notFound
            )
        }
    }

    @Test("a duplicate id is alreadyExists; a message needs exactly one target", arguments: StoreEngine.available)
    func insertErrors(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.insertMessage(topicMessage("m1"))
            let duplicate = await storeError { () async throws(StoreError) in
                try await store.insertMessage(topicMessage("m1"))
            }
            #expect(duplicate?.code == .alreadyExists)
            #expect(duplicate?.existingID == "m1")
            let both = MessageRecord(id: "m2", topic: "t", endpointID: "e", message: "x", publishedAt: 1)
            let neither = MessageRecord(id: "m3", message: "x", publishedAt: 1)
            for bad in [both, neither] {
                let error = await storeError { () async throws(StoreError) in try await store.insertMessage(bad) }
                #expect(error?.code == .invalidArgument)
            }
        }
    }

    @Test(
        "messages, chunk progress and unfinished work survive closing and reopening the store",
        arguments: StoreEngine.available)
    func durableAcrossRestart(engine: StoreEngine) async throws {
        try await withLocation(engine) { location in
            let policy = FanOutLeasePolicy(owner: "first", leaseMillis: 60_000, chunkSize: 2)
            do {
                let store = try await location.open()
                _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a", "b", "c"], now: 1)
                try await store.insertMessage(topicMessage("running", at: 2))
                try await store.insertMessage(topicMessage("waiting", at: 3))
                // Both chunks of "running" (2 + the last 1), then one of "waiting" (fewest chunks first).
                let first = try #require(try await store.claimFanOutChunk(policy, now: 10))
                #expect(first.message.id == "running" && first.number == 0)
                try await store.recordChunkProgress(
                    first, policy: policy, cursor: "",
                    counts: ProgressCounts(total: 2, delivered: 1, rejected: 1), state: .completed, now: 11)
                await store.close()
                let closed = await storeError { () async throws(StoreError) in try await store.message(id: "running") }
                #expect(closed?.code == .internal)
            }
            let reopened = try await location.open()
            let running = try await reopened.message(id: "running")
            #expect(running.state == .fanningOut)
            #expect([running.total, running.delivered, running.rejected] == [2, 1, 1])
            #expect(running.attributes["kind"] == "breaking")
            let unfinished = try await reopened.unfinishedMessages()
            #expect(unfinished.map(\.id) == ["running", "waiting"])
            #expect(unfinished[1] == topicMessage("waiting", at: 3))
            // The rest of "running" is planned after the finished chunk's range.
            let next = try #require(
                try await reopened.claimFanOutChunk(
                    FanOutLeasePolicy(owner: "second", leaseMillis: 60_000, chunkSize: 2), now: 20))
            #expect(next.message.id == "waiting" && next.number == 0)
            await reopened.close()
        }
    }
}
