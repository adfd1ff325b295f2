import PushStore
import Testing

/// The webhooks' outbox (batches, leases, trimming, finished messages) and the delivery log
/// (written with a fan-out's progress, listed, purged), on every engine.
@Suite("Webhook outbox and delivery log")
struct OutboxAndDeliveryLogTests {
    private func policy(_ owner: String, chunkSize: Int = 10, lease: Int64 = 1000) -> FanOutLeasePolicy {
        FanOutLeasePolicy(owner: owner, leaseMillis: lease, chunkSize: chunkSize)
    }

    private func events(_ webhook: String, _ names: [String], at time: Int64 = 1) -> [OutboxEvent] {
        names.map { OutboxEvent(webhook: webhook, json: #"{"n":"\#($0)"}"#, createdAt: time) }
    }

    private func texts(_ batch: WebhookBatch?) -> [String] {
        (batch?.events ?? []).map {
            switch $0 {
            case .json(let text): text
            case .messageFinished(let id, _): "finished:" + id
            case .messageCancelled(let id, _, _): "cancelled:" + id
            }
        }
    }

    private func log(
        _ message: String, _ endpoint: String, _ status: DeliveryLogRecord.Status, time: Int64, reason: String = ""
    ) -> DeliveryLogRecord {
        DeliveryLogRecord(
            messageID: message, endpointID: endpoint, app: "ios", token: "tok-" + endpoint, status: status,
            reason: reason, httpStatus: status == .rejected ? 410 : 200, providerID: "id-\(time)", attempts: 1,
            time: time)
    }

    @Test(
        "a batch is the oldest events, the same rows and id until completed; then the next; per webhook",
        arguments: StoreEngine.available)
    func batches(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.appendOutbox(events("crm", ["a", "b", "c"]) + events("ops", ["x"]))
            let first = try #require(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i1", limit: 2, leaseMillis: 100, now: 0))
            #expect(texts(first) == [#"{"n":"a"}"#, #"{"n":"b"}"#] && !first.id.isEmpty)
            // More events arrive; the unanswered batch is sent again unchanged.
            try await store.appendOutbox(events("crm", ["d"]))
            let again = try await store.takeWebhookBatch(
                webhook: "crm", owner: "i1", limit: 5, leaseMillis: 100, now: 1)
            #expect(again == first)
            #expect(try await store.pendingOutbox(webhook: "crm") == 4)
            #expect(try await store.completeWebhookBatch(webhook: "crm", batch: first.id) == 2)
            let next = try #require(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i1", limit: 5, leaseMillis: 100, now: 2))
            #expect(texts(next) == [#"{"n":"c"}"#, #"{"n":"d"}"#] && next.id != first.id)
            #expect(try await store.completeWebhookBatch(webhook: "crm", batch: next.id) == 2)
            let empty = try await store.takeWebhookBatch(
                webhook: "crm", owner: "i1", limit: 5, leaseMillis: 100, now: 3)
            #expect(empty == WebhookBatch(id: "", events: []))
            let ops = try await store.takeWebhookBatch(webhook: "ops", owner: "i1", limit: 5, leaseMillis: 100, now: 3)
            #expect(texts(ops) == [#"{"n":"x"}"#])
        }
    }

    @Test(
        "one owner at a time sends a webhook: another gets nil until the lease runs out or is released, then the same batch",
        arguments: StoreEngine.available)
    func leases(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.appendOutbox(events("crm", ["a"]))
            let held = try await store.takeWebhookBatch(webhook: "crm", owner: "i1", limit: 5, leaseMillis: 100, now: 0)
            #expect(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i2", limit: 5, leaseMillis: 100, now: 50)
                    == nil)
            // The holder renews by taking again.
            _ = try await store.takeWebhookBatch(webhook: "crm", owner: "i1", limit: 5, leaseMillis: 100, now: 90)
            #expect(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i2", limit: 5, leaseMillis: 100, now: 150)
                    == nil)
            let takenOver = try await store.takeWebhookBatch(
                webhook: "crm", owner: "i2", limit: 5, leaseMillis: 100, now: 191)
            #expect(takenOver == held)
            try await store.releaseWebhookLeases(owner: "i2")
            #expect(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i3", limit: 5, leaseMillis: 100, now: 192)
                    == held)
        }
    }

    @Test(
        "trimming drops what is older than the age limit, then the oldest beyond max_pending, a bounded step at a time, never a batch being sent",
        arguments: StoreEngine.available)
    func trim(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.appendOutbox(
                events("crm", ["old1", "old2"], at: 10) + events("crm", ["a", "b", "c"], at: 100))
            try await store.appendOutbox(events("ops", ["keep"], at: 10))
            let trim = try await store.trimOutbox(webhook: "crm", maxPending: 2, createdBefore: 50, limit: 100)
            #expect(trim == OutboxTrim(overflow: 1, expired: 2))
            let left = try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 10, leaseMillis: 10, now: 0)
            #expect(texts(left) == [#"{"n":"b"}"#, #"{"n":"c"}"#])
            // The next batch reports the drops, not a row taking room in the outbox.
            #expect(left?.dropped == 3 && left?.formedAt == 0)
            #expect(try await store.pendingOutbox(webhook: "ops") == 1)
            #expect(
                try await store.trimOutbox(webhook: "crm", maxPending: 2, createdBefore: 50, limit: 100) == OutboxTrim()
            )
            // The formed batch (b, c) is never cut, however full or old the outbox.
            try await store.appendOutbox(events("crm", ["d", "e", "f", "g"], at: 200))
            #expect(
                try await store.trimOutbox(webhook: "crm", maxPending: 1, createdBefore: 1000, limit: 3)
                    == OutboxTrim(overflow: 0, expired: 3))
            #expect(
                try await store.trimOutbox(webhook: "crm", maxPending: 1, createdBefore: 1000, limit: 3)
                    == OutboxTrim(overflow: 0, expired: 1))
            let same = try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 10, leaseMillis: 10, now: 1)
            #expect(same == left)
            // Completed, the next batch reports the later drops (all four, expired): only that.
            try await store.completeWebhookBatch(webhook: "crm", batch: try #require(left).id)
            let next = try #require(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 10, leaseMillis: 10, now: 2))
            #expect(next.events.isEmpty && next.dropped == 4 && next.formedAt == 2)
            try await store.completeWebhookBatch(webhook: "crm", batch: next.id)
            #expect(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 10, leaseMillis: 10, now: 3)
                    == WebhookBatch(id: "", events: []))
            try await store.appendOutbox(events("crm", ["h", "i"], at: 1))
            _ = try await store.trimOutbox(webhook: "crm", maxPending: 100, createdBefore: 500, limit: 10)
            let onlyDrops = try #require(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 10, leaseMillis: 10, now: 4))
            #expect(onlyDrops.events.isEmpty && onlyDrops.dropped == 2 && !onlyDrops.isEmpty)
        }
    }

    @Test(
        "a formed batch stays the same rows while older unbatched rows wait (PostgreSQL commits out of seq order)",
        arguments: StoreEngine.available)
    func lateRows(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            try await store.appendOutbox(events("crm", ["a", "b"]))
            let first = try #require(
                try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 1, leaseMillis: 100, now: 0))
            #expect(texts(first) == [#"{"n":"a"}"#])
            let again = try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 5, leaseMillis: 100, now: 1)
            #expect(again == first)
        }
    }

    @Test(
        "a fan-out commit disables its dead endpoints in the same transaction",
        arguments: StoreEngine.available)
    func disableInCommit(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a", "b"], now: 1)
            try await store.insertMessage(MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1))
            let a = policy("a")
            let chunk = try #require(try await store.claimFanOutChunk(a, now: 0))
            let page = try await store.fanOutPage(.topic("news"), after: chunk.cursor, through: chunk.end, limit: 10)
            let dead = page.items[1].endpoint.id
            try await store.recordChunkProgress(
                chunk, policy: a, cursor: try #require(page.items.last).cursor,
                counts: ProgressCounts(total: 2, delivered: 1, rejected: 1), state: .fanningOut, holds: .none,
                records: FanOutRecords(disable: [FanOutRecords.Disable(endpointID: dead, reason: "Unregistered")]),
                now: 5)
            let endpoint = try await store.endpoint(id: dead)
            #expect(!endpoint.enabled && endpoint.disabledReason == "Unregistered")
            #expect(try await store.endpoint(id: page.items[0].endpoint.id).enabled)
        }
    }

    @Test(
        "a message tells its webhooks once it finishes: by its last chunk, not before",
        arguments: StoreEngine.available)
    func finishedByLastChunk(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a", "b", "c"], now: 1)
            var message = MessageRecord(id: "m", topic: "news", message: "hi", publishedAt: 1)
            message.notify = ["crm", "ops"]
            try await store.insertMessage(message)
            #expect(try await store.message(id: "m").notify == ["crm", "ops"])
            let a = policy("a", chunkSize: 2)
            let first = try #require(try await store.claimFanOutChunk(a, now: 0))
            let second = try #require(try await store.claimFanOutChunk(a, now: 0))
            let page1 = try await store.fanOutPage(.topic("news"), after: first.cursor, through: first.end, limit: 10)
            try await store.recordChunkProgress(
                first, policy: a, cursor: try #require(page1.items.last).cursor,
                counts: ProgressCounts(total: 2, delivered: 2), state: .completed, now: 5)
            #expect(try await store.pendingOutbox(webhook: "crm") == 0)
            let page2 = try await store.fanOutPage(.topic("news"), after: second.cursor, through: second.end, limit: 10)
            try await store.recordChunkProgress(
                second, policy: a, cursor: try #require(page2.items.last).cursor,
                counts: ProgressCounts(total: 1, rejected: 1), state: .completed, holds: .none,
                records: FanOutRecords(
                    deliveries: [log("m", "e3", .rejected, time: 6, reason: "Unregistered")],
                    events: events("crm", ["disabled"])),
                now: 6)
            let batch = try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 10, leaseMillis: 10, now: 7)
            #expect(texts(batch) == [#"{"n":"disabled"}"#, "finished:m"])
            let ops = try await store.takeWebhookBatch(webhook: "ops", owner: "i", limit: 10, leaseMillis: 10, now: 7)
            #expect(ops?.events == [.messageFinished(messageID: "m", at: 6)])
            let logged = try await store.listDeliveries(
                messageID: "m", endpointID: nil, status: nil, cursor: nil, limit: 10)
            #expect(logged.items == [log("m", "e3", .rejected, time: 6, reason: "Unregistered")])
        }
    }

    @Test(
        "a cancelled message tells its webhooks when the cancel ends it, or when its last worked chunk stops, once",
        arguments: StoreEngine.available)
    func finishedByCancel(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a", "b", "c"], now: 1)
            var scheduled = MessageRecord(
                id: "s", topic: "news", message: "hi", publishedAt: 1, deliverAt: 10, state: .scheduled)
            scheduled.notify = ["crm"]
            try await store.insertMessage(scheduled)
            _ = try await store.cancelMessage(id: "s", notify: ["crm"], now: 2)
            #expect(try await store.pendingOutbox(webhook: "crm") == 2)

            var running = MessageRecord(id: "r", topic: "news", message: "hi", publishedAt: 1)
            running.notify = ["crm"]
            try await store.insertMessage(running)
            let a = policy("a")
            let chunk = try #require(try await store.claimFanOutChunk(a, now: 3))
            _ = try await store.cancelMessage(id: "r", now: 4)
            #expect(try await store.pendingOutbox(webhook: "crm") == 2)
            try await store.recordChunkProgress(
                chunk, policy: a, cursor: chunk.cursor, counts: ProgressCounts(), state: .cancelled, now: 5)
            let batch = try await store.takeWebhookBatch(webhook: "crm", owner: "i", limit: 10, leaseMillis: 10, now: 6)
            #expect(texts(batch) == ["cancelled:s", "finished:s", "finished:r"])
            // The cancel's count is the one it answered, fixed in the row.
            #expect(batch?.events.first == .messageCancelled(messageID: "s", cancelled: 3, at: 2))

            // A dead holder's chunk ended by the next claim finishes the message too.
            var orphan = MessageRecord(id: "o", topic: "news", message: "hi", publishedAt: 1)
            orphan.notify = ["ops"]
            try await store.insertMessage(orphan)
            _ = try #require(try await store.claimFanOutChunk(policy("dead", lease: 10), now: 10))
            _ = try await store.cancelMessage(id: "o", now: 11)
            #expect(try await store.pendingOutbox(webhook: "ops") == 0)
            #expect(try await store.claimFanOutChunk(policy("b"), now: 100) == nil)
            #expect(try await store.pendingOutbox(webhook: "ops") == 1)
        }
    }

    @Test(
        "the delivery log lists by message, by endpoint and by status, newest first, in pages; purges the old in batches",
        arguments: StoreEngine.available)
    func deliveryLog(engine: StoreEngine) async throws {
        try await withStore(engine) { store in
            _ = try await store.bulkCreateSubscribed(topic: "news", app: "ios", tokens: ["a"], now: 1)
            try await store.insertMessage(MessageRecord(id: "m1", topic: "news", message: "1", publishedAt: 1))
            let a = policy("a")
            let chunk = try #require(try await store.claimFanOutChunk(a, now: 0))
            let rows = [
                log("m1", "e1", .rejected, time: 10, reason: "Unregistered"),
                log("m1", "e2", .failed, time: 11, reason: "ProviderUnreachable"),
                log("m2", "e1", .delivered, time: 12),
                log("m2", "e3", .rejected, time: 13, reason: "BadDeviceToken"),
                log("m3", "e1", .failed, time: 14, reason: "DeadlineExceeded"),
            ]
            try await store.recordChunkProgress(
                chunk, policy: a, cursor: chunk.cursor, counts: ProgressCounts(), state: .fanningOut, holds: .none,
                records: FanOutRecords(deliveries: rows), now: 20)
            let m1 = try await store.listDeliveries(
                messageID: "m1", endpointID: nil, status: nil, cursor: nil, limit: 10)
            #expect(m1.items == [rows[1], rows[0]] && m1.nextCursor == nil)
            var history: [DeliveryLogRecord] = []
            var cursor: String? = nil
            repeat {
                let page = try await store.listDeliveries(
                    messageID: nil, endpointID: "e1", status: nil, cursor: cursor, limit: 2)
                history += page.items
                cursor = page.nextCursor
            } while cursor != nil
            #expect(history == [rows[4], rows[2], rows[0]])
            let rejected = try await store.listDeliveries(
                messageID: nil, endpointID: nil, status: .rejected, cursor: nil, limit: 10)
            #expect(rejected.items == [rows[3], rows[0]])
            let wrong = await storeError { () async throws(StoreError) in
                try await store.listDeliveries(messageID: nil, endpointID: nil, status: nil, cursor: "ms.1", limit: 10)
            }
            #expect(wrong?.code == .invalidArgument)
            #expect(try await store.purgeDeliveryLog(before: 13, limit: 2) == 2)
            #expect(try await store.purgeDeliveryLog(before: 13, limit: 2) == 1)
            #expect(try await store.purgeDeliveryLog(before: 13, limit: 2) == 0)
            let left = try await store.listDeliveries(
                messageID: nil, endpointID: nil, status: nil, cursor: nil, limit: 10)
            #expect(left.items == [rows[4], rows[3]])
        }
    }
}
