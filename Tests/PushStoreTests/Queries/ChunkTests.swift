import PushPosix
import PushStore
import PushSync
import Testing

@Suite("Fan-out chunks and leases")
struct ChunkTests {
    private func policy(_ owner: String, chunkSize: Int = 10, lease: Int64 = 1000) -> FanOutLeasePolicy {
        FanOutLeasePolicy(owner: owner, leaseMillis: lease, chunkSize: chunkSize)
    }

    /// Every target of a chunk's range, paging `limit` at a time from its cursor.
    private static func targets(of chunk: FanOutChunk, in store: any Store, limit: Int = 3) async throws
        -> [FanOutTarget]
    {
        var all: [FanOutTarget] = []
        var cursor: String? = chunk.cursor
        repeat {
            let page = try await store.fanOutPage(
                topic: chunk.message.topic ?? "", after: cursor, through: chunk.end, limit: limit)
            all += page.items
            cursor = page.nextCursor
        } while cursor != nil
        return all
    }

    @Test(
        "a topic is split into chunks of chunkSize, the last runs to the end; together they cover it once",
        arguments: StoreEngine.available)
    func split(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            let tokens = (0..<25).map { "tok\($0)" }
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: tokens, now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            var seen: [String] = []
            var sizes: [Int] = []
            var numbers: [Int] = []
            while let chunk = try await store.claimFanOutChunk(policy("o\(numbers.count)"), now: 5) {
                numbers.append(chunk.number)
                let range = try await Self.targets(of: chunk, in: store)
                sizes.append(range.count)
                seen += range.map(\.endpoint.token)
                #expect(chunk.end == nil || chunk.end == range.last?.cursor)
                #expect(try await store.message(id: "m").state == .fanningOut)
            }
            #expect(numbers == [0, 1, 2])
            #expect(sizes == [10, 10, 5])
            #expect(seen == tokens)
        }
    }

    @Test(
        "a leased chunk is not claimed again; once its lease runs out another owner resumes after the committed cursor",
        arguments: StoreEngine.available)
    func takeOver(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(
                topic: "news", app: "ios", tokens: ["a", "b", "c", "d", "e"], now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            let a = policy("a")
            let b = policy("b")
            let mine = try #require(try await store.claimFanOutChunk(a, now: 0))
            #expect(mine.leaseExpiresAt == 1000 && mine.end == nil && mine.cursor == "")
            #expect(try await store.claimFanOutChunk(b, now: 500) == nil)
            let firstTwo = Array(try await Self.targets(of: mine, in: store).prefix(2))
            try await store.recordChunkProgress(
                mine, policy: a, cursor: firstTwo[1].cursor,
                counts: ProgressCounts(total: 2, delivered: 2), state: .fanningOut, now: 600)
            // The commit renewed the lease to 1600.
            #expect(try await store.claimFanOutChunk(b, now: 1500) == nil)
            #expect(try await store.renewFanOutLease(mine, policy: a, now: 700) == 1700)
            let taken = try #require(try await store.claimFanOutChunk(b, now: 1700))
            #expect(taken.number == 0 && taken.cursor == firstTwo[1].cursor && taken.leaseExpiresAt == 2700)
            #expect(try await Self.targets(of: taken, in: store).map(\.endpoint.token) == ["c", "d", "e"])

            // The old owner finds out at its next commit or renewal, and records nothing.
            let late = await storeError { () async throws(StoreError) in
                try await store.recordChunkProgress(
                    mine, policy: a, cursor: "", counts: ProgressCounts(total: 3, delivered: 3),
                    state: .completed, now: 1800)
            }
            #expect(late?.code == .conflict)
            let renewal = await storeError { () async throws(StoreError) in
                try await store.renewFanOutLease(mine, policy: a, now: 1800)
            }
            #expect(renewal?.code == .conflict)
            // Even the same owner's earlier claim is refused once the chunk was claimed again.
            try await store.releaseFanOutLeases(owner: "b")
            let again = try #require(try await store.claimFanOutChunk(b, now: 1750))
            #expect(again.claim != taken.claim && again.claim.hasPrefix("b/"))
            let stale = await storeError { () async throws(StoreError) in
                try await store.renewFanOutLease(taken, policy: b, now: 1760)
            }
            #expect(stale?.code == .conflict)

            try await store.recordChunkProgress(
                again, policy: b, cursor: "", counts: ProgressCounts(total: 3, delivered: 2, failed: 1),
                state: .completed, now: 1900)
            let message = try await store.message(id: "m")
            #expect(message.state == .completed)
            #expect([message.total, message.delivered, message.failed] == [5, 4, 1])
            #expect(try await store.claimFanOutChunk(b, now: 99_999) == nil)
            #expect(try await store.unfinishedMessages().isEmpty)
        }
    }

    @Test(
        "counts are the sum over chunks; the message completes with its last chunk, expired if any chunk expired",
        arguments: StoreEngine.available)
    func sumAndState(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(
                topic: "news", app: "ios", tokens: (0..<20).map { "t\($0)" }, now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            let first = try #require(try await store.claimFanOutChunk(policy("a"), now: 0))
            let second = try #require(try await store.claimFanOutChunk(policy("b"), now: 0))
            #expect([first.number, second.number] == [0, 1])
            try await store.recordChunkProgress(
                second, policy: policy("b"), cursor: "",
                counts: ProgressCounts(total: 10, delivered: 7, rejected: 1, failed: 1, skipped: 1), state: .expired,
                now: 1)
            var message = try await store.message(id: "m")
            #expect(message.state == .fanningOut)
            try await store.recordChunkProgress(
                first, policy: policy("a"), cursor: "",
                counts: ProgressCounts(total: 10, delivered: 10), state: .completed, now: 2)
            message = try await store.message(id: "m")
            #expect(message.state == .expired)
            #expect(
                [message.total, message.delivered, message.rejected, message.failed, message.skipped] == [
                    20, 17, 1, 1, 1,
                ])
        }
    }

    @Test("a direct publish is one chunk; releasing leases hands chunks over at once", arguments: StoreEngine.available)
    func directAndRelease(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.insertMessage(MessageRecord(id: "d", endpointID: "e1", message: "hi", publishedAt: 1))
            let chunk = try #require(try await store.claimFanOutChunk(policy("a"), now: 0))
            #expect(chunk.message.id == "d" && chunk.number == 0 && chunk.cursor == "" && chunk.end == nil)
            #expect(try await store.claimFanOutChunk(policy("b"), now: 1) == nil)
            try await store.releaseFanOutLeases(owner: "a")
            let taken = try #require(try await store.claimFanOutChunk(policy("b"), now: 1))
            #expect(taken.number == 0)
            try await store.recordChunkProgress(
                taken, policy: policy("b"), cursor: "", counts: ProgressCounts(total: 1, delivered: 1),
                state: .completed, now: 2)
            #expect(try await store.message(id: "d").state == .completed)
            #expect(try await store.claimFanOutChunk(policy("b"), now: 3) == nil)
        }
    }

    @Test(
        "bad progress is refused: negative counts, state accepted, unknown message or chunk, parking and finishing at once, another claim",
        arguments: StoreEngine.available)
    func badProgress(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.insertMessage(MessageRecord(id: "d", endpointID: "e1", message: "hi", publishedAt: 1))
            let a = policy("a")
            let held = try #require(try await store.claimFanOutChunk(a, now: 0))
            var unknownMessage = held
            unknownMessage.message.id = "nope"
            var unknownChunk = held
            unknownChunk.number = 7
            var otherClaim = held
            otherClaim.claim = "a/another"
            let cases: [(FanOutChunk, ProgressCounts, MessageState, FanOutHoldChanges, StoreError.Code)] = [
                (held, ProgressCounts(total: -1), .fanningOut, .none, .invalidArgument),
                (held, ProgressCounts(), .accepted, .none, .invalidArgument),
                (unknownMessage, ProgressCounts(), .fanningOut, .none, .notFound),
                (unknownChunk, ProgressCounts(), .fanningOut, .none, .notFound),
                // A chunk that parks does not also finish.
                (held, ProgressCounts(), .completed, FanOutHoldChanges(parkUntil: 100), .invalidArgument),
                // The same owner with another claim (another worker of the same process) is refused.
                (otherClaim, ProgressCounts(total: 1), .completed, .none, .conflict),
            ]
            for (chunk, counts, state, holds, code) in cases {
                let error = await storeError { () async throws(StoreError) in
                    try await store.recordChunkProgress(
                        chunk, policy: a, cursor: "", counts: counts, state: state, holds: holds, now: 1)
                }
                #expect(error?.code == code, "\(chunk.message.id) \(chunk.number) \(chunk.claim) \(state)")
            }
            #expect(try await store.message(id: "d").total == 0)
        }
    }

    @Test(
        "held recipients: held with the page, reported as waiting, parked, claimed again after the park with their endpoints, released; a chunk that holds some cannot finish",
        arguments: StoreEngine.available)
    func holds(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a", "b", "c", "d"], now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            let a = policy("a")
            let b = policy("b")
            let chunk = try #require(try await store.claimFanOutChunk(a, now: 0))
            #expect(chunk.holds == 0 && chunk.parkings == 0)
            let page = try await Self.targets(of: chunk, in: store)
            let held = [page[1], page[3]].map {
                FanOutHold(endpointID: $0.endpoint.id, reason: "ProviderUnreachable: down")
            }
            let count = try await store.recordChunkProgress(
                chunk, policy: a, cursor: page[3].cursor, counts: ProgressCounts(total: 4, delivered: 2),
                state: .fanningOut, holds: FanOutHoldChanges(holding: held), now: 10)
            #expect(count == 2)
            var message = try await store.message(id: "m")
            #expect(message.total == 4 && message.delivered == 2 && message.waitingForProvider == 2)

            // Finishing while holding is refused; parking ends the claim until the park is over.
            let finishing = await storeError { () async throws(StoreError) in
                try await store.recordChunkProgress(
                    chunk, policy: a, cursor: page[3].cursor, counts: ProgressCounts(), state: .completed, now: 20)
            }
            #expect(finishing?.code == .invalidArgument)
            try await store.recordChunkProgress(
                chunk, policy: a, cursor: page[3].cursor, counts: ProgressCounts(), state: .fanningOut,
                holds: FanOutHoldChanges(parkUntil: 5_000), now: 20)
            let afterPark = await storeError { () async throws(StoreError) in
                try await store.renewFanOutLease(chunk, policy: a, now: 30)
            }
            #expect(afterPark?.code == .conflict)
            #expect(try await store.claimFanOutChunk(b, now: 4_999) == nil)
            #expect(try await store.message(id: "m").state == .fanningOut)

            // Claimed again after the park: with its holds, one of them deleted meanwhile.
            try await store.deleteEndpoint(id: page[3].endpoint.id)
            let resumed = try #require(try await store.claimFanOutChunk(b, now: 5_000))
            #expect(resumed.number == chunk.number && resumed.holds == 2 && resumed.parkings == 1)
            #expect(resumed.cursor == page[3].cursor)
            let recipients = try await store.heldRecipients(resumed)
            #expect(Set(recipients.map(\.hold.endpointID)) == Set(held.map(\.endpointID)))
            #expect(recipients.allSatisfy { $0.hold.reason == "ProviderUnreachable: down" })
            #expect(recipients.first { $0.hold.endpointID == page[1].endpoint.id }?.endpoint?.token == "b")
            #expect(recipients.first { $0.hold.endpointID == page[3].endpoint.id }?.endpoint == nil)

            // One delivered now, one held again (a new reason), then released: the chunk finishes.
            let stillHeld = try await store.recordChunkProgress(
                resumed, policy: b, cursor: resumed.cursor, counts: ProgressCounts(delivered: 1), state: .fanningOut,
                holds: FanOutHoldChanges(
                    holding: [FanOutHold(endpointID: page[3].endpoint.id, reason: "ServiceUnavailable")],
                    releasing: held.map(\.endpointID)),
                now: 5_010)
            #expect(stillHeld == 1)
            #expect(try await store.heldRecipients(resumed).map(\.hold.reason) == ["ServiceUnavailable"])
            let none = try await store.recordChunkProgress(
                resumed, policy: b, cursor: resumed.cursor, counts: ProgressCounts(skipped: 1), state: .fanningOut,
                holds: FanOutHoldChanges(releasing: [page[3].endpoint.id]), now: 5_020)
            #expect(none == 0)
            try await store.recordChunkProgress(
                resumed, policy: b, cursor: resumed.cursor, counts: ProgressCounts(), state: .completed, now: 5_030)
            message = try await store.message(id: "m")
            #expect(message.state == .completed && message.waitingForProvider == 0)
            #expect(message.total == 4 && message.delivered == 3 && message.skipped == 1)
        }
    }

    @Test(
        "two stores on one database, many claimers each: every chunk is worked once and the message completes once",
        arguments: StoreEngine.available)
    func concurrentClaims(engine: StoreEngine) async throws {
        try await withLocation(engine) { location in
            let one = try await location.open()
            let two = try await location.open()
            let tokens = (0..<400).map { "t\($0)" }
            _ = try await one.bulkCreateSubscribed(topic: "news", app: "ios", tokens: tokens, now: 1)
            try await one.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            let ledger = Ledger()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    let store = worker % 2 == 0 ? one : two
                    group.addTask {
                        let mine = FanOutLeasePolicy(owner: "w\(worker)", leaseMillis: 600_000, chunkSize: 7)
                        while let chunk = try await store.claimFanOutChunk(mine, now: 1) {
                            ledger.record(chunk.number, by: mine.owner)
                            let range = try await Self.targets(of: chunk, in: store, limit: 50)
                            try await store.recordChunkProgress(
                                chunk, policy: mine, cursor: range.last?.cursor ?? "",
                                counts: ProgressCounts(total: Int64(range.count), delivered: Int64(range.count)),
                                state: .completed, now: 2)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(ledger.duplicates == 0)
            #expect(ledger.chunks == 58)  // 57 chunks of 7, then the last 1
            let message = try await two.message(id: "m")
            #expect(message.state == .completed)
            #expect(message.total == 400 && message.delivered == 400)
            await one.close()
            await two.close()
        }
    }
}

/// Which worker claimed which chunk, from many tasks.
private final class Ledger: Sendable {
    private let state = Locked<(owners: [Int: String], duplicates: Int)>(([:], 0))

    func record(_ chunk: Int, by owner: String) {
        state.withLock { if $0.owners.updateValue(owner, forKey: chunk) != nil { $0.duplicates += 1 } }
    }

    var duplicates: Int { state.withLock { $0.duplicates } }
    var chunks: Int { state.withLock { $0.owners.count } }
}
