import PushStore
import Testing

@Suite("Topics and subscriptions")
struct TopicSubscriptionTests {
    @Test("create topic is idempotent; delete is idempotent", arguments: StoreEngine.available)
    func topics(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            #expect(try await store.createTopic(name: "news") == TopicRecord(name: "news"))
            #expect(try await store.createTopic(name: "news") == TopicRecord(name: "news"))
            _ = try await store.createTopic(name: "sport")
            #expect(try await store.topicExists(name: "news"))
            #expect(try await store.listTopics(cursor: nil, limit: 10).items.map(\.name) == ["news", "sport"])
            try await store.deleteTopic(name: "news")
            try await store.deleteTopic(name: "news")
            #expect(try await !store.topicExists(name: "news"))
            #expect(try await store.listTopics(cursor: nil, limit: 10).items.map(\.name) == ["sport"])
        }
    }

    @Test("subscribing to a missing topic or endpoint is notFound naming it", arguments: StoreEngine.available)
    func subscribeMissing(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let noTopic = await storeError { () async throws(StoreError) in
                try await store.subscribe(topic: "nope", endpointID: e.id, filterPolicyJSON: "")
            }
            #expect(noTopic?.code == .notFound)
            #expect(noTopic?.message.contains("nope") == true)
            _ = try await store.createTopic(name: "news")
            let noEndpoint = await storeError { () async throws(StoreError) in
                try await store.subscribe(topic: "news", endpointID: "missing", filterPolicyJSON: "")
            }
            #expect(noEndpoint?.code == .notFound)
            #expect(noEndpoint?.message.contains("missing") == true)
        }
    }

    @Test(
        "subscribe is idempotent per topic and endpoint; the latest filter policy wins",
        arguments: StoreEngine.available)
    func idempotentSubscribe(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "news")
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let (first, created) = try await store.subscribe(topic: "news", endpointID: e.id, filterPolicyJSON: "")
            #expect(created)
            #expect(first.topic == "news" && first.endpointID == e.id && first.id.utf8.count == 32)

            let (same, createdAgain) = try await store.subscribe(topic: "news", endpointID: e.id, filterPolicyJSON: "")
            #expect(!createdAgain && same == first)

            let policy = #"{"kind":["breaking"]}"#
            let (updated, createdThird) = try await store.subscribe(
                topic: "news", endpointID: e.id, filterPolicyJSON: policy)
            #expect(!createdThird && updated.id == first.id && updated.filterPolicyJSON == policy)
            #expect(try await store.subscription(id: first.id) == updated)
            #expect(
                try await store.listSubscriptions(topic: "news", endpointID: nil, cursor: nil, limit: 10).items == [
                    updated
                ])
        }
    }

    @Test(
        "a subscription keeps its filter policy scope; updates by id change one field and never resurrect it",
        arguments: StoreEngine.available)
    func scopeAndUpdates(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "news")
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let policy = #"{"order":{"status":["paid"]}}"#
            let (made, _) = try await store.subscribe(
                topic: "news", endpointID: e.id, filterPolicyJSON: policy, filterPolicyScope: "MessageBody")
            #expect(try await store.subscription(id: made.id).filterPolicyScope == "MessageBody")
            let page = try await store.fanOutPage(topic: "news", after: nil, through: nil, limit: 10)
            #expect(page.items.first?.subscription.filterPolicyScope == "MessageBody")
            let scoped = try await store.updateSubscription(id: made.id, filterPolicyJSON: nil, filterPolicyScope: "")
            #expect(scoped.filterPolicyJSON == policy && scoped.filterPolicyScope == "")
            let cleared = try await store.updateSubscription(id: made.id, filterPolicyJSON: "", filterPolicyScope: nil)
            #expect(cleared.filterPolicyJSON == "" && cleared.filterPolicyScope == "")
            try await store.unsubscribe(id: made.id)
            let gone = await storeError { () async throws(StoreError) in
                _ = try await store.updateSubscription(id: made.id, filterPolicyJSON: "{}", filterPolicyScope: nil)
            }
            #expect(gone?.code == .notFound)
            #expect(
                try await store.listSubscriptions(topic: "news", endpointID: nil, cursor: nil, limit: 10).items.isEmpty)
        }
    }

    @Test("an endpoint can be made disabled; its state is compared when asked", arguments: StoreEngine.available)
    func createDisabled(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let (off, created) = try await store.createEndpoint(
                app: "ios", normalizedToken: "bb", customUserData: "", enabled: false, now: 1)
            #expect(created && !off.enabled)
            #expect(
                try await store.createEndpoint(app: "ios", normalizedToken: "bb", customUserData: "", now: 2).endpoint
                    == off)
            let conflict = await storeError { () async throws(StoreError) in
                _ = try await store.createEndpoint(
                    app: "ios", normalizedToken: "bb", customUserData: "", enabled: true, now: 3)
            }
            #expect(conflict?.code == .alreadyExists && conflict?.existingID == off.id)
        }
    }

    @Test("unsubscribe is idempotent", arguments: StoreEngine.available)
    func unsubscribe(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "news")
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let (s, _) = try await store.subscribe(topic: "news", endpointID: e.id, filterPolicyJSON: "")
            try await store.unsubscribe(id: s.id)
            try await store.unsubscribe(id: s.id)
            #expect(
                await storeError { () async throws(StoreError) in try await store.subscription(id: s.id) }?.code
                    == .notFound)
            // The endpoint stays.
            #expect(try await store.endpoint(id: e.id) == e)
        }
    }

    @Test("deleting a topic removes its subscriptions but not the endpoints", arguments: StoreEngine.available)
    func deleteTopicCascades(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "news")
            _ = try await store.createTopic(name: "sport")
            let (e, _) = try await store.createEndpoint(app: "ios", normalizedToken: "aa", customUserData: "", now: 1)
            let (s1, _) = try await store.subscribe(topic: "news", endpointID: e.id, filterPolicyJSON: "")
            let (s2, _) = try await store.subscribe(topic: "sport", endpointID: e.id, filterPolicyJSON: "")
            try await store.deleteTopic(name: "news")
            #expect(
                await storeError { () async throws(StoreError) in try await store.subscription(id: s1.id) }?.code
                    == .notFound)
            #expect(
                try await store.listSubscriptions(topic: nil, endpointID: e.id, cursor: nil, limit: 10).items == [s2])
            #expect(try await store.endpoint(id: e.id) == e)
            // Recreating the topic does not bring subscriptions back.
            _ = try await store.createTopic(name: "news")
            #expect(
                try await store.listSubscriptions(topic: "news", endpointID: nil, cursor: nil, limit: 10).items.isEmpty)
        }
    }

    @Test("list subscriptions filters by topic, endpoint or both, and pages", arguments: StoreEngine.available)
    func listFilters(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "news")
            _ = try await store.createTopic(name: "sport")
            var all: [SubscriptionRecord] = []
            for i in 0..<5 {
                let (e, _) = try await store.createEndpoint(
                    app: "ios", normalizedToken: "t\(i)", customUserData: "", now: 1)
                all.append(
                    try await store.subscribe(topic: "news", endpointID: e.id, filterPolicyJSON: "").subscription)
                all.append(
                    try await store.subscribe(topic: "sport", endpointID: e.id, filterPolicyJSON: "").subscription)
            }
            let news = try await store.listSubscriptions(topic: "news", endpointID: nil, cursor: nil, limit: 10)
            #expect(news.items == all.filter { $0.topic == "news" })
            let one = all[3].endpointID
            let byEndpoint = try await store.listSubscriptions(topic: nil, endpointID: one, cursor: nil, limit: 10)
            #expect(byEndpoint.items == all.filter { $0.endpointID == one })
            let both = try await store.listSubscriptions(topic: "sport", endpointID: one, cursor: nil, limit: 10)
            #expect(both.items == [all[3]])
            #expect(
                try await store.listSubscriptions(topic: "nope", endpointID: nil, cursor: nil, limit: 10).items.isEmpty)

            var seen: [SubscriptionRecord] = []
            var cursor: String? = nil
            repeat {
                let page = try await store.listSubscriptions(topic: nil, endpointID: nil, cursor: cursor, limit: 3)
                seen += page.items
                cursor = page.nextCursor
            } while cursor != nil
            #expect(seen == all)
        }
    }

    @Test(
        "topics list with their subscription counts when asked, 0 otherwise; endpoints list by app and token",
        arguments: StoreEngine.available)
    func countsAndTokenLookup(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.createTopic(name: "busy")
            _ = try await store.createTopic(name: "quiet")
            var endpoints: [EndpointRecord] = []
            for token in ["aa", "bb", "cc"] {
                endpoints.append(
                    try await store.createEndpoint(app: "ios", normalizedToken: token, customUserData: "", now: 1)
                        .endpoint)
            }
            let android = try await store.createEndpoint(
                app: "android", normalizedToken: "aa", customUserData: "", now: 1
            ).endpoint
            for endpoint in endpoints + [android] {
                _ = try await store.subscribe(
                    topic: "busy", endpointID: endpoint.id, filterPolicyJSON: "", filterPolicyScope: "")
            }
            let counted = try await store.listTopics(cursor: nil, limit: 10, countingSubscribers: true).items
            #expect(counted == [TopicRecord(name: "busy", subscribers: 4), TopicRecord(name: "quiet", subscribers: 0)])
            let plain = try await store.listTopics(cursor: nil, limit: 10).items
            #expect(plain == [TopicRecord(name: "busy"), TopicRecord(name: "quiet")])
            let found = try await store.listEndpoints(
                app: "ios", userID: nil, token: "aa", apps: nil, cursor: nil, limit: 10)
            #expect(found.items.map(\.id) == [endpoints[0].id] && found.nextCursor == nil)
            let other = try await store.listEndpoints(
                app: "android", userID: nil, token: "aa", apps: nil, cursor: nil, limit: 10)
            #expect(other.items.map(\.id) == [android.id])
            let scoped = try await store.listEndpoints(
                app: nil, userID: nil, token: nil, apps: ["android"], cursor: nil, limit: 10)
            #expect(scoped.items.map(\.id) == [android.id])
            #expect(
                try await store.listEndpoints(app: nil, userID: nil, token: nil, apps: [], cursor: nil, limit: 10).items
                    .isEmpty)
            let subscriptions = try await store.listSubscriptions(
                topic: "busy", endpointID: nil, apps: ["android"], cursor: nil, limit: 10)
            #expect(subscriptions.items.map(\.endpointID) == [android.id])
            #expect(
                try await store.listEndpoints(app: "ios", userID: nil, token: "zz", apps: nil, cursor: nil, limit: 10)
                    .items
                    .isEmpty)
        }
    }
}
