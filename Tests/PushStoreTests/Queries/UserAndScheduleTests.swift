import PushStore
import Testing

/// Users on endpoints, user publishes, scheduled messages, cancelling, the rate cap's shared clock
/// and the message listing, on every engine.
@Suite("Users, schedules and cancelling")
struct UserAndScheduleTests {
    private func policy(_ owner: String, chunkSize: Int = 10, lease: Int64 = 1000) -> FanOutLeasePolicy {
        FanOutLeasePolicy(owner: owner, leaseMillis: lease, chunkSize: chunkSize)
    }

    private func endpoint(_ store: any Store, app: String, token: String, user: String) async throws -> EndpointRecord {
        try await store.createEndpoint(
            app: app, normalizedToken: token, customUserData: "", userID: user, enabled: nil, now: 1
        ).endpoint
    }

    /// Every recipient of a chunk, paging `limit` at a time from its cursor.
    private static func recipients(of chunk: FanOutChunk, in store: any Store, limit: Int = 2) async throws
        -> [FanOutTarget]
    {
        var all: [FanOutTarget] = []
        var cursor: String? = chunk.cursor
        repeat {
            let page = try await store.fanOutPage(
                try #require(chunk.message.target), after: cursor, through: chunk.end, limit: limit)
            all += page.items
            cursor = page.nextCursor
        } while cursor != nil
        return all
    }

    @Test(
        "a user id is set on create, moved by a create with another, kept by one without, set and cleared by update",
        arguments: StoreEngine.available)
    func userOnEndpoints(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let first = try await endpoint(store, app: "ios", token: "t1", user: "u1")
            #expect(first.userID == "u1")
            #expect(try await store.endpoint(id: first.id).userID == "u1")
            let moved = try await store.createEndpoint(
                app: "ios", normalizedToken: "t1", customUserData: "", userID: "u2", enabled: nil, now: 2)
            #expect(!moved.created && moved.endpoint.id == first.id && moved.endpoint.userID == "u2")
            let kept = try await store.createEndpoint(app: "ios", normalizedToken: "t1", customUserData: "", now: 3)
            #expect(kept.endpoint.userID == "u2")
            let cleared = try await store.updateEndpoint(
                id: first.id, normalizedToken: nil, enabled: nil, customUserData: nil, userID: "")
            #expect(cleared.userID == "")
            let set = try await store.updateEndpoint(
                id: first.id, normalizedToken: nil, enabled: false, customUserData: nil, userID: "u3")
            #expect(set.userID == "u3" && !set.enabled)
            #expect(
                try await store.updateEndpoint(id: first.id, normalizedToken: nil, enabled: true, customUserData: nil)
                    .userID == "u3")
        }
    }

    @Test(
        "endpoints list by user and app; a user has endpoints only in the apps asked about",
        arguments: StoreEngine.available)
    func listByUser(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let a = try await endpoint(store, app: "ios", token: "a", user: "u1")
            _ = try await endpoint(store, app: "ios", token: "b", user: "u2")
            let c = try await endpoint(store, app: "android", token: "c", user: "u1")
            _ = try await endpoint(store, app: "android", token: "d", user: "")
            let first = try await store.listEndpoints(app: nil, userID: "u1", cursor: nil, limit: 1)
            #expect(first.items.map(\.id) == [a.id])
            let second = try await store.listEndpoints(app: nil, userID: "u1", cursor: first.nextCursor, limit: 1)
            #expect(second.items.map(\.id) == [c.id] && second.nextCursor == nil)
            #expect(
                try await store.listEndpoints(app: "android", userID: "u1", cursor: nil, limit: 10).items.map(\.id) == [
                    c.id
                ])
            #expect(try await store.listEndpoints(app: nil, userID: "nobody", cursor: nil, limit: 10).items.isEmpty)
            #expect(try await store.hasEndpoints(userID: "u1", apps: []))
            #expect(try await store.hasEndpoints(userID: "u1", apps: ["android", "web"]))
            #expect(try await !store.hasEndpoints(userID: "u2", apps: ["android"]))
        }
    }

    @Test(
        "a user publish is chunked over the user's endpoints in its apps only, disabled ones included",
        arguments: StoreEngine.available)
    func userFanOut(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            var mine: [String] = []
            for index in 0..<5 {
                mine.append(
                    try await endpoint(store, app: index % 2 == 0 ? "ios" : "android", token: "m\(index)", user: "u1")
                        .token)
                _ = try await endpoint(store, app: "ios", token: "o\(index)", user: "u2")
            }
            _ = try await endpoint(store, app: "web", token: "w", user: "u1")
            try await store.disableEndpoint(
                id: try await store.listEndpoints(app: nil, userID: "u1", cursor: nil, limit: 1).items[0].id,
                reason: "x")
            try await store.insertMessage(
                MessageRecord(id: "m", userID: "u1", apps: ["android", "ios"], message: "hi", publishedAt: 1))
            var seen: [String] = []
            var sizes: [Int] = []
            while let chunk = try await store.claimFanOutChunk(policy("o\(sizes.count)", chunkSize: 2), now: 5) {
                #expect(chunk.message.target == .user("u1", apps: ["android", "ios"]))
                let range = try await Self.recipients(of: chunk, in: store)
                sizes.append(range.count)
                seen += range.map(\.endpoint.token)
                #expect(range.allSatisfy { $0.subscription.filterPolicyJSON.isEmpty })
            }
            #expect(sizes == [2, 2, 1])
            #expect(seen == mine)
        }
    }

    @Test(
        "a scheduled message is claimable from its deliver_at on, and not before",
        arguments: StoreEngine.available)
    func scheduled(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a", "b"], now: 1)
            try await store.insertMessage(
                MessageRecord(
                    id: "later", topic: "news", message: "hi", publishedAt: 1, deliverAt: 1000, state: .scheduled))
            let stored = try await store.message(id: "later")
            #expect(stored.state == .scheduled && stored.deliverAt == 1000 && stored.startsAt == 1000)
            #expect(try await store.claimFanOutChunk(policy("a"), now: 999) == nil)
            #expect(try await store.messageState(id: "later") == .scheduled)
            let chunk = try #require(try await store.claimFanOutChunk(policy("a"), now: 1000))
            #expect(chunk.message.id == "later" && chunk.message.state == .fanningOut)
            #expect(try await store.messageState(id: "later") == .fanningOut)
            let refused = await storeError { () async throws(StoreError) in
                try await store.insertMessage(
                    MessageRecord(id: "bad", topic: "news", message: "hi", publishedAt: 1, state: .scheduled))
            }
            #expect(refused?.code == .invalidArgument)
        }
    }

    @Test(
        "a cancelled scheduled message never starts and counts every recipient cancelled; finished and unknown ones are refused",
        arguments: StoreEngine.available)
    func cancelScheduled(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a", "b", "c"], now: 1)
            try await store.insertMessage(
                MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1, deliverAt: 10, state: .scheduled))
            let cancelled = try await store.cancelMessage(id: "m", now: 5)
            #expect(cancelled.state == .cancelled && cancelled.total == 3 && cancelled.cancelled == 3)
            #expect(try await store.claimFanOutChunk(policy("a"), now: 100) == nil)
            let again = await storeError { () async throws(StoreError) in try await store.cancelMessage(id: "m", now: 6)
            }
            #expect(again?.code == .failedPrecondition)
            let unknown = await storeError { () async throws(StoreError) in
                try await store.cancelMessage(id: "x", now: 6)
            }
            #expect(unknown?.code == .notFound)

            try await store.insertMessage(MessageRecord(id: "d", endpointID: "e", message: "hi", publishedAt: 1))
            let direct = try await store.cancelMessage(id: "d", now: 6)
            #expect(direct.total == 1 && direct.cancelled == 1)

            try await store.insertMessage(MessageRecord(id: "done", topic: "news", message: "hi", publishedAt: 1))
            let chunk = try #require(try await store.claimFanOutChunk(policy("a"), now: 7))
            let all = try await Self.recipients(of: chunk, in: store)
            try await store.recordChunkProgress(
                chunk, policy: policy("a"), cursor: all[2].cursor, counts: ProgressCounts(total: 3, delivered: 3),
                state: .completed, now: 8)
            let finished = await storeError { () async throws(StoreError) in
                try await store.cancelMessage(id: "done", now: 9)
            }
            #expect(finished?.code == .failedPrecondition)
        }
    }

    @Test(
        "cancelling a running fan-out: the unplanned rest and idle chunks at once, a worked chunk at its holder's next record; sent + cancelled == total",
        arguments: StoreEngine.available)
    func cancelRunning(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(
                topic: "news", app: "ios", tokens: (0..<35).map { "t\($0)" }, now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            let a = policy("a")
            let worked = try #require(try await store.claimFanOutChunk(a, now: 0))
            let dead = try #require(try await store.claimFanOutChunk(policy("b", lease: 10), now: 0))
            let workedPage = Array(try await Self.recipients(of: worked, in: store).prefix(3))
            try await store.recordChunkProgress(
                worked, policy: a, cursor: workedPage[2].cursor, counts: ProgressCounts(total: 3, delivered: 3),
                state: .fanningOut, now: 50)
            // At 100: chunk 1's holder is gone (lease ran out at 10), chunk 0's is alive; 15 unplanned.
            let cancelled = try await store.cancelMessage(id: "m", now: 100)
            #expect(cancelled.state == .cancelled)
            #expect(cancelled.total == 3 + 10 + 15 && cancelled.delivered == 3 && cancelled.cancelled == 25)
            #expect(dead.number == 1)
            // Nothing more is planned or taken over; the live holder records its last page and ends.
            #expect(try await store.claimFanOutChunk(policy("c"), now: 200) == nil)
            // Its last page: one sent, one not (a rate-capped send stopped by the cancel).
            let next = Array(try await Self.recipients(of: worked, in: store)[3..<5])
            try await store.recordChunkProgress(
                worked, policy: a, cursor: next[1].cursor, counts: ProgressCounts(total: 2, delivered: 1, cancelled: 1),
                state: .fanningOut, now: 300)
            try await store.recordChunkProgress(
                worked, policy: a, cursor: next[1].cursor, counts: ProgressCounts(), state: .cancelled, now: 310)
            let settled = try await store.message(id: "m")
            #expect(settled.state == .cancelled && settled.total == 35)
            #expect(settled.delivered == 4 && settled.cancelled == 31)
            #expect(settled.delivered + settled.cancelled == settled.total)
            #expect(try await store.unfinishedMessages().isEmpty)
        }
    }

    @Test(
        "a chunk whose holder died after the cancel is ended by the next claim, its rest and holds cancelled",
        arguments: StoreEngine.available)
    func cancelThenHolderDies(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(
                topic: "news", app: "ios", tokens: (0..<6).map { "t\($0)" }, now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            let a = policy("a")
            let chunk = try #require(try await store.claimFanOutChunk(a, now: 0))
            let page = Array(try await Self.recipients(of: chunk, in: store).prefix(2))
            try await store.recordChunkProgress(
                chunk, policy: a, cursor: page[1].cursor, counts: ProgressCounts(total: 2, delivered: 1),
                state: .fanningOut,
                holds: FanOutHoldChanges(holding: [FanOutHold(endpointID: page[1].endpoint.id, reason: "Unavailable")]),
                now: 10)
            let cancelled = try await store.cancelMessage(id: "m", now: 20)
            #expect(cancelled.cancelled == 0 && cancelled.waitingForProvider == 1)
            #expect(try await store.claimFanOutChunk(policy("b"), now: 5000) == nil)
            let settled = try await store.message(id: "m")
            #expect(settled.total == 6 && settled.delivered == 1 && settled.cancelled == 5)
            #expect(settled.waitingForProvider == 0)
        }
    }

    @Test(
        "pace reservations of one message follow each other, from now when the clock fell behind",
        arguments: StoreEngine.available)
    func pace(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            #expect(try await store.reservePace(messageID: "m", count: 5, maxPerSecond: 10, nowMicros: 1_000) == 1_000)
            #expect(
                try await store.reservePace(messageID: "m", count: 5, maxPerSecond: 10, nowMicros: 2_000) == 501_000)
            #expect(
                try await store.reservePace(messageID: "m", count: 1, maxPerSecond: 3, nowMicros: 5_000_000)
                    == 5_000_000)
            // 1/3 s rounded up: the next slot starts no earlier than the cap allows.
            #expect(
                try await store.reservePace(messageID: "m", count: 1, maxPerSecond: 3, nowMicros: 5_000_000)
                    == 5_333_334)
            let unknown = await storeError { () async throws(StoreError) in
                try await store.reservePace(messageID: "x", count: 1, maxPerSecond: 1, nowMicros: 0)
            }
            #expect(unknown?.code == .notFound)
        }
    }

    @Test(
        "messages list newest first, by state and by topic, a page at a time, with their targets and schedules",
        arguments: StoreEngine.available)
    func listMessages(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.insertMessage(MessageRecord(id: "m1", topic: "a", message: "1", publishedAt: 1))
            try await store.insertMessage(MessageRecord(id: "m2", endpointID: "e", message: "2", publishedAt: 2))
            try await store.insertMessage(
                MessageRecord(
                    id: "m3", userID: "u", apps: ["ios"], message: "3", publishedAt: 3, deliverAt: 900, maxPerSecond: 7,
                    state: .scheduled))
            try await store.insertMessage(MessageRecord(id: "m4", topic: "a", message: "4", publishedAt: 4))
            var ids: [String] = []
            var cursor: String? = nil
            repeat {
                let page = try await store.listMessages(state: nil, topic: nil, cursor: cursor, limit: 3)
                ids += page.items.map(\.id)
                cursor = page.nextCursor
            } while cursor != nil
            #expect(ids == ["m4", "m3", "m2", "m1"])
            let scheduled = try await store.listMessages(state: .scheduled, topic: nil, cursor: nil, limit: 10).items
            #expect(scheduled.map(\.id) == ["m3"])
            #expect(scheduled.first?.target == .user("u", apps: ["ios"]))
            #expect(scheduled.first?.deliverAt == 900 && scheduled.first?.maxPerSecond == 7)
            #expect(
                try await store.listMessages(state: nil, topic: "a", cursor: nil, limit: 10).items.map(\.id) == [
                    "m4", "m1",
                ])
            #expect(try await store.listMessages(state: .accepted, topic: "a", cursor: nil, limit: 1).nextCursor != nil)
            let bad = await storeError { () async throws(StoreError) in
                try await store.listMessages(state: nil, topic: nil, cursor: "ep.1", limit: 10)
            }
            #expect(bad?.code == .invalidArgument)
        }
    }

    @Test(
        "a claim's filter passes over rate-capped messages, or named ones, for planning and taking over",
        arguments: StoreEngine.available)
    func claimFilter(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(
                topic: "news", app: "ios", tokens: (0..<4).map { "t\($0)" }, now: 1)
            try await store.insertMessage(
                MessageRecord(id: "capped", topic: "news", message: "1", publishedAt: 1, maxPerSecond: 10))
            try await store.insertMessage(MessageRecord(id: "free", topic: "news", message: "2", publishedAt: 2))
            let unpaced = FanOutClaimFilter(paced: false)
            let first = try #require(
                try await store.claimFanOutChunk(policy("a", chunkSize: 2), filter: unpaced, now: 0))
            #expect(first.message.id == "free")
            let skipping = FanOutClaimFilter(skippingMessages: ["free"])
            let second = try #require(
                try await store.claimFanOutChunk(policy("b", chunkSize: 2, lease: 10), filter: skipping, now: 0))
            #expect(second.message.id == "capped" && second.message.maxPerSecond == 10)
            // Chunk 0 of "capped" lost its lease at 10; planning has "free" left: skipping both, none.
            let both = FanOutClaimFilter(skippingMessages: ["free", "capped"])
            #expect(try await store.claimFanOutChunk(policy("c", chunkSize: 2), filter: both, now: 20) == nil)
            let taken = try #require(
                try await store.claimFanOutChunk(policy("c", chunkSize: 2), filter: skipping, now: 20))
            #expect(taken.message.id == "capped" && taken.number == 0)
        }
    }
}
