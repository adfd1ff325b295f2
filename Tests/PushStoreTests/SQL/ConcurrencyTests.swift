import PushStore
import Testing

@Suite("Concurrent callers")
struct ConcurrencyTests {
    @Test("many tasks registering the same token get one endpoint, created once", arguments: StoreEngine.available)
    func sameToken(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let results = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        let (endpoint, created) = try await store.createEndpoint(
                            app: "ios", normalizedToken: "same", customUserData: "", now: 1)
                        return (endpoint.id, created)
                    }
                }
                var all: [(String, Bool)] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(Set(results.map(\.0)).count == 1)
            #expect(results.filter(\.1).count == 1)
        }
    }

    @Test("concurrent registrations, subscriptions and progress are all applied", arguments: StoreEngine.available)
    func mixedWrites(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "news")
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "x", publishedAt: 1))
            let policy = FanOutLeasePolicy(owner: "a", leaseMillis: 60_000, chunkSize: 1000)
            let chunk = try #require(try await store.claimFanOutChunk(policy, now: 1))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<100 {
                    group.addTask {
                        let (e, _) = try await store.createEndpoint(
                            app: "ios", normalizedToken: "t\(i)", customUserData: "", now: Int64(i))
                        _ = try await store.subscribe(topic: "news", endpointID: e.id, filterPolicyJSON: "")
                        try await store.recordChunkProgress(
                            chunk, policy: policy, cursor: "",
                            counts: ProgressCounts(total: 1, delivered: 1), state: .fanningOut, now: 2)
                    }
                }
                try await group.waitForAll()
            }
            let page = try await store.fanOutPage(topic: "news", after: nil, through: nil, limit: 1000)
            #expect(page.items.count == 100)
            #expect(Set(page.items.map(\.endpoint.token)).count == 100)
            let m = try await store.message(id: "m")
            #expect(m.delivered == 100 && m.total == 100)
        }
    }
}
