import PushStore
import Testing

@Suite("Broadcast channels")
struct ChannelTests {
    @Test(
        "channels are recorded per app with their policy, listed in pages, deleted once",
        arguments: StoreEngine.available)
    func channels(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let first = ChannelRecord(app: "ios", channelID: "dHN0LXNyY2gtY2hubA==", storagePolicy: 1, createdAt: 5)
            try await store.insertChannel(first)
            // A second record of the same id (a create answered twice) keeps the first.
            try await store.insertChannel(
                ChannelRecord(app: "ios", channelID: first.channelID, storagePolicy: 0, createdAt: 9))
            for index in 0..<3 {
                try await store.insertChannel(
                    ChannelRecord(app: "ios", channelID: "c\(index)", storagePolicy: 0, createdAt: Int64(index)))
            }
            // The same id in another app is another channel.
            try await store.insertChannel(ChannelRecord(app: "other", channelID: "c0", storagePolicy: 1, createdAt: 1))
            #expect(try await store.channel(app: "ios", channelID: first.channelID) == first)
            #expect(try await store.channel(app: "ios", channelID: "missing") == nil)
            #expect(try await store.channel(app: "other", channelID: "c0")?.storagePolicy == 1)
            let page = try await store.listChannels(app: "ios", cursor: nil, limit: 2)
            #expect(page.items.map(\.channelID) == [first.channelID, "c0"])
            let next = try await store.listChannels(app: "ios", cursor: page.nextCursor, limit: 2)
            #expect(next.items.map(\.channelID) == ["c1", "c2"])
            #expect(next.nextCursor == nil)
            #expect(try await store.deleteChannel(app: "ios", channelID: "c1"))
            #expect(try await !store.deleteChannel(app: "ios", channelID: "c1"))
            #expect(try await store.channel(app: "ios", channelID: "c1") == nil)
            #expect(try await store.listChannels(app: "ios", cursor: nil, limit: 10).items.count == 3)
            #expect(try await store.listChannels(app: "other", cursor: nil, limit: 10).items.map(\.channelID) == ["c0"])
        }
    }

    @Test("a topic's page cursor is refused for channels", arguments: StoreEngine.available)
    func foreignCursor(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let error = await storeError { () async throws(StoreError) in
                _ = try await store.listChannels(app: "ios", cursor: "tp.1", limit: 10)
            }
            #expect(error?.code == .invalidArgument)
        }
    }
}
