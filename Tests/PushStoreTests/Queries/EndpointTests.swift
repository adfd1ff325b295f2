import PushStore
import Testing

@Suite("Endpoints")
struct EndpointTests {
    @Test(
        "same app, token and custom data answers the existing endpoint, even when disabled",
        arguments: StoreEngine.available)
    func idempotentCreate(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (first, created) = try await store.createEndpoint(
                app: "ios", normalizedToken: "abcd", customUserData: "u1", now: 1000)
            #expect(created)
            #expect(first.enabled && first.disabledReason.isEmpty && first.createdAt == 1000)
            #expect(first.id.utf8.count == 32)

            let (again, createdAgain) = try await store.createEndpoint(
                app: "ios", normalizedToken: "abcd", customUserData: "u1", now: 2000)
            #expect(!createdAgain)
            #expect(again == first)

            try await store.disableEndpoint(id: first.id, reason: "Unregistered")
            let (disabled, createdDisabled) = try await store.createEndpoint(
                app: "ios", normalizedToken: "abcd", customUserData: "u1", now: 3000)
            #expect(!createdDisabled)
            #expect(disabled.id == first.id)
            // Not re-enabled, as in SNS.
            #expect(!disabled.enabled && disabled.disabledReason == "Unregistered")
        }
    }

    @Test(
        "same token with different custom data is alreadyExists naming the existing id",
        arguments: StoreEngine.available)
    func differentCustomData(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (first, _) = try await store.createEndpoint(
                app: "ios", normalizedToken: "abcd", customUserData: "u1", now: 1)
            let error = try #require(
                await storeError { () async throws(StoreError) in
                    try await store.createEndpoint(app: "ios", normalizedToken: "abcd", customUserData: "u2", now: 2)
                })
            #expect(error.code == .alreadyExists)
            #expect(error.existingID == first.id)
            #expect(
                error.message
                    == "endpoint \(first.id) already exists with the same token, but different custom_user_data")
        }
    }

    @Test("the same token in another app is another endpoint", arguments: StoreEngine.available)
    func perApp(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (a, _) = try await store.createEndpoint(app: "ios", normalizedToken: "abcd", customUserData: "", now: 1)
            let (b, created) = try await store.createEndpoint(
                app: "android", normalizedToken: "abcd", customUserData: "x", now: 1)
            #expect(created)
            #expect(a.id != b.id)
        }
    }

    @Test("get answers notFound for an unknown id", arguments: StoreEngine.available)
    func getMissing(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let error = await storeError { () async throws(StoreError) in try await store.endpoint(id: "nope") }
            #expect(error?.code == .notFound)
        }
    }

    @Test("update changes only the given fields", arguments: StoreEngine.available)
    func updateFields(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "u", now: 5)
            let changed = try await store.updateEndpoint(
                id: e.id, normalizedToken: "bb", enabled: nil, customUserData: nil)
            #expect(changed.token == "bb" && changed.customUserData == "u" && changed.enabled)
            let changed2 = try await store.updateEndpoint(
                id: e.id, normalizedToken: nil, enabled: nil, customUserData: "v")
            #expect(changed2.token == "bb" && changed2.customUserData == "v" && changed2.createdAt == 5)
            #expect(try await store.endpoint(id: e.id) == changed2)
            // The old token is free again.
            let (other, created) = try await store.createEndpoint(
                app: "ios", normalizedToken: "aa", customUserData: "", now: 6)
            #expect(created && other.id != e.id)
        }
    }

    @Test("updating the token to another endpoint's is alreadyExists naming it", arguments: StoreEngine.available)
    func updateTokenTaken(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (a, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let (b, _) = try await store.createEndpoint(app: "ios", normalizedToken: "bb", customUserData: "", now: 1)
            let error = await storeError { () async throws(StoreError) in
                try await store.updateEndpoint(id: b.id, normalizedToken: "aa", enabled: nil, customUserData: nil)
            }
            #expect(error?.code == .alreadyExists)
            #expect(error?.existingID == a.id)
            #expect(try await store.endpoint(id: b.id).token == "bb")
            // Its own token is no conflict.
            let same = try await store.updateEndpoint(
                id: b.id, normalizedToken: "bb", enabled: nil, customUserData: nil)
            #expect(same == b)
        }
    }

    @Test(
        "re-enabling clears the disabled reason; a token change alone does not re-enable",
        arguments: StoreEngine.available)
    func reenable(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            try await store.disableEndpoint(id: e.id, reason: "BadDeviceToken")
            try await store.disableEndpoint(id: e.id, reason: "Unregistered")  // idempotent; the latest reason wins
            let disabled = try await store.endpoint(id: e.id)
            #expect(!disabled.enabled && disabled.disabledReason == "Unregistered")

            let newToken = try await store.updateEndpoint(
                id: e.id, normalizedToken: "cc", enabled: nil, customUserData: nil)
            #expect(!newToken.enabled && newToken.disabledReason == "Unregistered")

            let enabled = try await store.updateEndpoint(
                id: e.id, normalizedToken: nil, enabled: true, customUserData: nil)
            #expect(enabled.enabled && enabled.disabledReason.isEmpty)

            let byHand = try await store.updateEndpoint(
                id: e.id, normalizedToken: nil, enabled: false, customUserData: nil)
            #expect(!byHand.enabled && byHand.disabledReason.isEmpty)
        }
    }

    @Test("disabling an unknown endpoint is notFound; a batch ignores unknown ids", arguments: StoreEngine.available)
    func disableMany(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (a, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let (b, _) = try await store.createEndpoint(app: "ios", normalizedToken: "bb", customUserData: "", now: 1)
            let (c, _) = try await store.createEndpoint(app: "ios", normalizedToken: "cc", customUserData: "", now: 1)
            #expect(
                await storeError { () async throws(StoreError) in
                    try await store.disableEndpoint(id: "gone", reason: "x")
                }?.code == .notFound)
            try await store.disableEndpoints([(a.id, "Unregistered"), ("gone", "x"), (c.id, "BadDeviceToken")])
            #expect(try await store.endpoint(id: a.id).disabledReason == "Unregistered")
            #expect(try await store.endpoint(id: b.id).enabled)
            #expect(try await store.endpoint(id: c.id).disabledReason == "BadDeviceToken")
        }
    }

    @Test("delete is idempotent and removes the endpoint's subscriptions", arguments: StoreEngine.available)
    func deleteCascades(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "news")
            _ = try await store.createTopic(name: "sport")
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let (keep, _) = try await store.createEndpoint(
                app: "ios", normalizedToken: "bb", customUserData: "", now: 1)
            let (s1, _) = try await store.subscribe(topic: "news", endpointID: e.id, filterPolicyJSON: "")
            _ = try await store.subscribe(topic: "sport", endpointID: e.id, filterPolicyJSON: "")
            let (s3, _) = try await store.subscribe(topic: "news", endpointID: keep.id, filterPolicyJSON: "")

            try await store.deleteEndpoint(id: e.id)
            try await store.deleteEndpoint(id: e.id)
            #expect(
                await storeError { () async throws(StoreError) in try await store.endpoint(id: e.id) }?.code
                    == .notFound)
            #expect(
                await storeError { () async throws(StoreError) in try await store.subscription(id: s1.id) }?.code
                    == .notFound)
            let left = try await store.listSubscriptions(topic: nil, endpointID: nil, cursor: nil, limit: 100)
            #expect(left.items == [s3])
        }
    }

    @Test("250 endpoints page as 100, 100, 50, each once, in creation order", arguments: StoreEngine.available)
    func paging(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            var created: [String] = []
            for i in 0..<250 {
                let app = i % 5 == 0 ? "android" : "ios"
                created.append(
                    try await store.createEndpoint(
                        app: app, normalizedToken: "t\(i)", customUserData: "", now: Int64(i)
                    )
                    .endpoint.id)
            }
            var seen: [String] = []
            var pageSizes: [Int] = []
            var cursor: String? = nil
            repeat {
                let page = try await store.listEndpoints(app: nil, cursor: cursor, limit: 100)
                pageSizes.append(page.items.count)
                seen += page.items.map(\.id)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(pageSizes == [100, 100, 50])
            #expect(seen == created)

            // One app's endpoints only.
            let android = try await store.listEndpoints(app: "android", cursor: nil, limit: 1000)
            #expect(android.items.count == 50 && android.nextCursor == nil)
            #expect(android.items.allSatisfy { $0.app == "android" })
        }
    }

    @Test("a malformed or foreign cursor and a bad limit are invalidArgument", arguments: StoreEngine.available)
    func badCursor(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "a")
            _ = try await store.createTopic(name: "b")
            let topics = try await store.listTopics(cursor: nil, limit: 1)
            let topicCursor = try #require(topics.nextCursor)
            for cursor in ["garbage", "ep.", "ep.-1", "ep.0", "ep.zzzzzzzzzzzzzzzzzz", topicCursor] {
                let error = await storeError { () async throws(StoreError) in
                    try await store.listEndpoints(app: nil, cursor: cursor, limit: 10)
                }
                #expect(error?.code == .invalidArgument, "cursor \(cursor)")
            }
            for limit in [0, -1, 10_001] {
                let error = await storeError { () async throws(StoreError) in
                    try await store.listEndpoints(app: nil, cursor: nil, limit: limit)
                }
                #expect(error?.code == .invalidArgument, "limit \(limit)")
            }
            // "" is the start, like an empty page_token.
            #expect(try await store.listTopics(cursor: "", limit: 10).items.count == 2)
        }
    }

    @Test(
        "a 4096-character token (FCM's longest) registers, is found again and stays unique",
        arguments: StoreEngine.available)
    func longToken(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:.-")
            var generator = SystemRandomNumberGenerator()
            let token = String((0..<4096).map { _ in alphabet.randomElement(using: &generator)! })
            let (created, isNew) = try await store.createEndpoint(
                app: "android", normalizedToken: token, customUserData: "", now: 1)
            #expect(isNew)
            let (again, againNew) = try await store.createEndpoint(
                app: "android", normalizedToken: token, customUserData: "", now: 2)
            #expect(!againNew && again.id == created.id && again.token == token)
            let (other, _) = try await store.createEndpoint(
                app: "android", normalizedToken: String(token.dropLast()) + "!", customUserData: "", now: 3)
            #expect(other.id != created.id)
            let clash = await storeError { () async throws(StoreError) in
                try await store.updateEndpoint(id: other.id, normalizedToken: token, enabled: nil, customUserData: nil)
            }
            #expect(clash?.code == .alreadyExists && clash?.existingID == created.id)
        }
    }
}
