import PushTestSupport
import Testing

@testable import PushStore

@Suite("Fan-out reads")
struct FanOutTests {
    @Test("20,000 bulk-loaded subscribers page through fanOutPage each exactly once", arguments: StoreEngine.available)
    func bulkAndPage(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let tokens = (0..<20_000).map { String(hexToken($0)) }
            #expect(try await store.bulkCreateSubscribed(topic: "all", app: "ios", tokens: tokens, now: 7) == 20_000)
            // Loading again creates nothing.
            #expect(
                try await store.bulkCreateSubscribed(topic: "all", app: "ios", tokens: Array(tokens.prefix(10)), now: 8)
                    == 0)

            var seenTokens = Set<String>()
            var seenSubscriptions = Set<String>()
            var pages = 0
            var cursor: String? = nil
            repeat {
                let page = try await store.fanOutPage(topic: "all", after: cursor, through: nil, limit: 1000)
                pages += 1
                for target in page.items {
                    #expect(seenTokens.insert(target.endpoint.token).inserted)
                    #expect(seenSubscriptions.insert(target.cursor).inserted)
                    #expect(target.subscription.endpointID == target.endpoint.id)
                    #expect(target.subscription.topic == "all")
                }
                #expect(page.nextCursor == nil || page.nextCursor == page.items.last?.cursor)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(pages == 20)
            #expect(seenTokens == Set(tokens))
        }
    }

    @Test(
        "disabled endpoints are included; a per-target cursor resumes right after it", arguments: StoreEngine.available)
    func disabledAndResume(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "t", app: "ios", tokens: ["a", "b", "c", "d", "e"], now: 1)
            let first = try await store.fanOutPage(topic: "t", after: nil, through: nil, limit: 5)
            #expect(first.items.map(\.endpoint.token) == ["a", "b", "c", "d", "e"])
            #expect(first.nextCursor == nil)
            try await store.disableEndpoint(id: first.items[1].endpoint.id, reason: "Unregistered")

            let resumed = try await store.fanOutPage(topic: "t", after: first.items[0].cursor, through: nil, limit: 2)
            #expect(resumed.items.map(\.endpoint.token) == ["b", "c"])
            #expect(!resumed.items[0].endpoint.enabled)
            let rest = try await store.fanOutPage(topic: "t", after: resumed.nextCursor, through: nil, limit: 2)
            #expect(rest.items.map(\.endpoint.token) == ["d", "e"])
            #expect(rest.nextCursor == nil)
        }
    }

    @Test(
        "a subscription's copies of its endpoint follow it: Subscribe, an import, a token change, enabling, disabling",
        arguments: StoreEngine.available)
    func copiesFollowEndpoints(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "t")
            let (one, _) = try await store.createEndpoint(app: "ios", normalizedToken: "t1", customUserData: "", now: 1)
            _ = try await store.subscribe(topic: "t", endpointID: one.id, filterPolicyJSON: "")
            try await expectCopiesMatch(store, ["t": 1])
            // An import: a new endpoint disabled, and the existing one disabled and subscribed to a
            // new topic in the same batch (its new subscription copies the endpoint as changed).
            _ = try await store.importEndpoints(
                [
                    EndpointImport(app: "android", token: "t2", enabled: false, topics: ["t"]),
                    EndpointImport(app: "ios", token: "t1", enabled: false, topics: ["u"]),
                ], now: 2)
            try await expectCopiesMatch(store, ["t": 2, "u": 1])
            #expect(try await store.endpoint(id: one.id).enabled == false)
            _ = try await store.updateEndpoint(id: one.id, normalizedToken: "t1b", enabled: true, customUserData: nil)
            try await expectCopiesMatch(store, ["t": 2, "u": 1])
            let two = try await store.fanOutPage(topic: "t", after: nil, through: nil, limit: 10).items[1].endpoint
            _ = try await store.updateEndpoint(id: two.id, normalizedToken: nil, enabled: true, customUserData: "x")
            try await expectCopiesMatch(store, ["t": 2, "u": 1])
            try await store.disableEndpoints([(one.id, "Unregistered"), (two.id, "BadDeviceToken")])
            try await expectCopiesMatch(store, ["t": 2, "u": 1])
            try await store.disableEndpoint(id: one.id, reason: "again")
            _ = try await store.updateEndpoint(id: two.id, normalizedToken: "t2b", enabled: nil, customUserData: nil)
            try await expectCopiesMatch(store, ["t": 2, "u": 1])
            let last = try await store.fanOutPage(topic: "t", after: nil, through: nil, limit: 10).items
            #expect(last.map(\.endpoint.token) == ["t1b", "t2b"] && last.map(\.endpoint.enabled) == [false, false])
        }
    }

    /// Each topic's fan-out page has `counts[topic]` recipients, each exactly as its endpoint is.
    private func expectCopiesMatch(_ store: any Store, _ counts: [String: Int]) async throws {
        for (topic, count) in counts {
            let page = try await store.fanOutPage(topic: topic, after: nil, through: nil, limit: 10)
            #expect(page.items.count == count, "\(topic)")
            for target in page.items {
                let truth = try await store.endpoint(id: target.endpoint.id)
                #expect(
                    target.endpoint.app == truth.app && target.endpoint.token == truth.token
                        && target.endpoint.enabled == truth.enabled,
                    "\(topic): \(target.endpoint) against \(truth)")
            }
        }
    }

    @Test(
        "a missing topic gives an empty last page; other listings' cursors are refused",
        arguments: StoreEngine.available)
    func missingTopic(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let page = try await store.fanOutPage(topic: "nope", after: nil, through: nil, limit: 10)
            #expect(page.items.isEmpty && page.nextCursor == nil)
            let error = await storeError { () async throws(StoreError) in
                try await store.fanOutPage(topic: "nope", after: "sb.1", through: nil, limit: 10)
            }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test(
        "a range's upper end is inclusive; chunks of a topic page through their own subscriptions only",
        arguments: StoreEngine.available)
    func bounded(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(
                topic: "t", app: "ios", tokens: (0..<10).map { "tok\($0)" }, now: 1)
            let all = try await store.fanOutPage(topic: "t", after: nil, through: nil, limit: 100).items
            let first = try await store.fanOutPage(topic: "t", after: nil, through: all[3].cursor, limit: 100)
            #expect(first.items.map(\.endpoint.token) == ["tok0", "tok1", "tok2", "tok3"])
            #expect(first.nextCursor == nil)
            let paged = try await store.fanOutPage(topic: "t", after: all[3].cursor, through: all[8].cursor, limit: 2)
            #expect(paged.items.map(\.endpoint.token) == ["tok4", "tok5"])
            let rest = try await store.fanOutPage(
                topic: "t", after: paged.nextCursor, through: all[8].cursor, limit: 10)
            #expect(rest.items.map(\.endpoint.token) == ["tok6", "tok7", "tok8"])
        }
    }

    @Test("the fan-out query is an indexed range search, not a scan")
    func queryPlan() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Database(path: directory.databasePath)
        try Migrator.migrate(database)
        let plan = try database.rows(
            "EXPLAIN QUERY PLAN " + Database.fanOutSQL(.sqlite), [.text("t"), .integer(0), .integer(100), .integer(10)]
        ) {
            $0.text(3)
        }
        let text = plan.joined(separator: "\n")
        #expect(
            text.contains("SEARCH s USING INDEX subscriptions_topic (topic_seq=? AND rowid>? AND rowid<?)"), "\(text)")
        #expect(text.contains("SEARCH e USING INTEGER PRIMARY KEY"), "\(text)")
        #expect(!text.contains("SCAN"), "\(text)")
        #expect(!text.contains("TEMP B-TREE"), "\(text)")
    }
}

/// A 64-hex-digit token from a number, like an APNs token.
func hexToken(_ n: Int) -> String {
    let hex = String(n, radix: 16)
    return String(repeating: "0", count: 64 - hex.utf8.count) + hex
}
