import PushTestSupport
import Testing

@testable import PushStore

@Suite("Endpoint import and export")
struct ImportTests {
    @Test(
        "a batch creates endpoints, topics and subscriptions; the same batch again changes nothing",
        arguments: StoreEngine.available)
    func idempotent(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let rows = [
                EndpointImport(app: "ios", token: "a", userID: "u1", customUserData: "x", topics: ["news", "sport"]),
                EndpointImport(app: "ios", token: "b", enabled: false, topics: ["news"]),
                EndpointImport(app: "android", token: "a"),
            ]
            let first = try await store.importEndpoints(rows, now: 5)
            #expect(first == ImportCounts(created: 3, existing: 0, updated: 0, subscriptionsCreated: 3))
            let again = try await store.importEndpoints(rows, now: 6)
            #expect(again == ImportCounts(created: 0, existing: 3, updated: 0, subscriptionsCreated: 0))

            let page = try await store.exportEndpoints(app: nil, cursor: nil, limit: 10)
            #expect(page.nextCursor == nil)
            #expect(page.items.map(\.endpoint.token) == ["a", "b", "a"])
            #expect(page.items.map(\.topics) == [["news", "sport"], ["news"], []])
            let a = page.items[0].endpoint
            #expect(a.userID == "u1" && a.customUserData == "x" && a.enabled && a.createdAt == 5)
            #expect(!page.items[1].endpoint.enabled)
            #expect(try await store.exportEndpoints(app: "android", cursor: nil, limit: 10).items.count == 1)
        }
    }

    @Test(
        "an existing endpoint keeps its id and gets only the fields a row gives; topics add up",
        arguments: StoreEngine.available)
    func updates(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.importEndpoints(
                [EndpointImport(app: "ios", token: "a", userID: "u1", customUserData: "x", topics: ["news"])], now: 1)
            let before = try await store.exportEndpoints(app: "ios", cursor: nil, limit: 10).items[0].endpoint
            try await store.disableEndpoint(id: before.id, reason: "Unregistered")
            let counts = try await store.importEndpoints(
                [
                    EndpointImport(app: "ios", token: "a", customUserData: "y", topics: ["sport"]),
                    // A later row for the same token within the batch wins.
                    EndpointImport(app: "ios", token: "a", enabled: true),
                ], now: 2)
            #expect(counts == ImportCounts(created: 0, existing: 2, updated: 1, subscriptionsCreated: 1))
            let after = try await store.exportEndpoints(app: "ios", cursor: nil, limit: 10).items[0]
            #expect(after.endpoint.id == before.id)
            #expect(after.endpoint.userID == "u1")
            #expect(after.endpoint.customUserData == "y")
            #expect(after.endpoint.enabled && after.endpoint.disabledReason == "")
            #expect(after.topics == ["news", "sport"])
        }
    }

    @Test("export pages through every endpoint once, in creation order", arguments: StoreEngine.available)
    func exportPages(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let tokens = (0..<2_500).map { String(hexToken($0)) }
            #expect(try await store.bulkCreateSubscribed(topic: "all", app: "ios", tokens: tokens, now: 1) == 2_500)
            var seen: [String] = []
            var cursor: String?
            repeat {
                let page = try await store.exportEndpoints(app: nil, cursor: cursor, limit: 1000)
                seen += page.items.map(\.endpoint.token)
                #expect(page.items.allSatisfy { $0.topics == ["all"] })
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen == tokens)
        }
    }
}
