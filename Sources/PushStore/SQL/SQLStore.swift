/// A `Store` whose calls run the shared queries (`Queries/`) on a connection of its engine. The
/// engines differ only in how they run a job on a connection (`withDatabase`): SQLite on one serial
/// queue, PostgreSQL on a small pool of connections, each with its own thread.
protocol SQLStore: Store {
    associatedtype Connection: SQLDatabase

    /// The engine of every connection (its SQL dialect), known before one is taken.
    static var engine: SQLEngine { get }

    /// Runs `body` with a connection on the store's own thread(s) and suspends the calling task until
    /// it is done, so blocking database calls never occupy the cooperative pool or an event loop.
    func withDatabase<T: Sendable>(_ body: @escaping @Sendable (Connection) throws(StoreError) -> T)
        async throws(StoreError) -> T
}

/// The `Store` requirements: each moves its arguments onto a connection and runs the matching query.
extension SQLStore {
    // MARK: Endpoints

    public func createEndpoint(
        app: String, normalizedToken: String, customUserData: String, userID: String, enabled: Bool?, now: Int64
    ) async throws(StoreError) -> (endpoint: EndpointRecord, created: Bool) {
        try await withDatabase { database throws(StoreError) in
            try database.createEndpoint(
                app: app, token: normalizedToken, customUserData: customUserData, userID: userID, enabled: enabled,
                now: now)
        }
    }

    public func endpoint(id: String) async throws(StoreError) -> EndpointRecord {
        try await withDatabase { database throws(StoreError) in try database.endpoint(id: id).record }
    }

    public func updateEndpoint(
        id: String, normalizedToken: String?, enabled: Bool?, customUserData: String?, userID: String?
    ) async throws(StoreError) -> EndpointRecord {
        try await withDatabase { database throws(StoreError) in
            try database.updateEndpoint(
                id: id, token: normalizedToken, enabled: enabled, customUserData: customUserData, userID: userID)
        }
    }

    public func disableEndpoint(id: String, reason: String) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in
            guard try database.disableEndpoint(id: id, reason: reason) else {
                throw StoreError(.notFound, message: "endpoint \(id) does not exist")
            }
        }
    }

    public func disableEndpoints(_ endpoints: [(id: String, reason: String)]) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.disableEndpoints(endpoints) }
    }

    public func deleteEndpoint(id: String) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.deleteEndpoint(id: id) }
    }

    public func listEndpoints(
        app: String?, userID: String?, token: String?, apps: [String]?, cursor: String?, limit: Int
    ) async throws(StoreError) -> Page<EndpointRecord> {
        try await withDatabase { database throws(StoreError) in
            try database.listEndpoints(
                app: app, userID: userID, token: token, apps: apps, cursor: cursor, limit: limit)
        }
    }

    public func hasEndpoints(userID: String, apps: [String]) async throws(StoreError) -> Bool {
        try await withDatabase { database throws(StoreError) in try database.hasEndpoints(userID: userID, apps: apps) }
    }

    // MARK: Topics

    public func createTopic(name: String) async throws(StoreError) -> TopicRecord {
        try await withDatabase { database throws(StoreError) in
            try database.createTopic(name: name)
            return TopicRecord(name: name)
        }
    }

    public func deleteTopic(name: String) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.deleteTopic(name: name) }
    }

    public func topicExists(name: String) async throws(StoreError) -> Bool {
        try await withDatabase { database throws(StoreError) in try database.topicSeq(name: name) != nil }
    }

    public func listTopics(cursor: String?, limit: Int, countingSubscribers: Bool) async throws(StoreError)
        -> Page<TopicRecord>
    {
        try await withDatabase { database throws(StoreError) in
            try database.listTopics(cursor: cursor, limit: limit, countingSubscribers: countingSubscribers)
        }
    }

    // MARK: Subscriptions

    public func subscribe(topic: String, endpointID: String, filterPolicyJSON: String, filterPolicyScope: String)
        async throws(StoreError) -> (subscription: SubscriptionRecord, created: Bool)
    {
        try await withDatabase { database throws(StoreError) in
            try database.subscribe(
                topic: topic, endpointID: endpointID, filterPolicyJSON: filterPolicyJSON,
                filterPolicyScope: filterPolicyScope)
        }
    }

    public func updateSubscription(id: String, filterPolicyJSON: String?, filterPolicyScope: String?)
        async throws(StoreError) -> SubscriptionRecord
    {
        try await withDatabase { database throws(StoreError) in
            try database.updateSubscription(
                id: id, filterPolicyJSON: filterPolicyJSON, filterPolicyScope: filterPolicyScope)
        }
    }

    public func unsubscribe(id: String) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.unsubscribe(id: id) }
    }

    public func subscription(id: String) async throws(StoreError) -> SubscriptionRecord {
        try await withDatabase { database throws(StoreError) in try database.subscription(id: id) }
    }

    public func listSubscriptions(topic: String?, endpointID: String?, apps: [String]?, cursor: String?, limit: Int)
        async throws(StoreError) -> Page<SubscriptionRecord>
    {
        try await withDatabase { database throws(StoreError) in
            try database.listSubscriptions(
                topic: topic, endpointID: endpointID, apps: apps, cursor: cursor, limit: limit)
        }
    }

    public func fanOutPage(_ target: MessageTarget, after cursor: String?, through end: String?, limit: Int)
        async throws(StoreError) -> Page<FanOutTarget>
    {
        try await withDatabase { database throws(StoreError) in
            try database.fanOutPage(target, after: cursor, through: end, limit: limit)
        }
    }

    public func bulkCreateSubscribed(topic: String, app: String, tokens: [String], now: Int64)
        async throws(StoreError) -> Int
    {
        try await importEndpoints(
            tokens.map { EndpointImport(app: app, token: $0, topics: [topic]) }, now: now
        ).subscriptionsCreated
    }

    public func prepareImport(_ rows: [EndpointImport], now: Int64) -> ImportBatch {
        ImportBatch(rows, engine: Self.engine, now: now)
    }

    public func importEndpoints(_ batch: ImportBatch) async throws(StoreError) -> ImportCounts {
        try await withDatabase { database throws(StoreError) in try database.importEndpoints(batch) }
    }

    public func exportEndpoints(app: String?, cursor: String?, limit: Int) async throws(StoreError) -> Page<
        ExportedEndpoint
    > {
        try await withDatabase { database throws(StoreError) in
            try database.exportEndpoints(app: app, cursor: cursor, limit: limit)
        }
    }

    // MARK: Messages

    public func insertMessage(_ message: MessageRecord) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.insertMessage(message) }
    }

    public func message(id: String) async throws(StoreError) -> MessageRecord {
        try await withDatabase { database throws(StoreError) in try database.message(id: id) }
    }

    public func messageState(id: String) async throws(StoreError) -> MessageState {
        try await withDatabase { database throws(StoreError) in try database.messageState(id: id) }
    }

    public func listMessages(state: MessageState?, topic: String?, cursor: String?, limit: Int)
        async throws(StoreError) -> Page<MessageRecord>
    {
        try await withDatabase { database throws(StoreError) in
            try database.listMessages(state: state, topic: topic, cursor: cursor, limit: limit)
        }
    }

    public func cancelMessage(id: String, notify: [String], now: Int64) async throws(StoreError) -> MessageRecord {
        try await withDatabase { database throws(StoreError) in
            try database.cancelMessage(id: id, notify: notify, now: now)
        }
    }

    public func reservePace(messageID: String, count: Int, maxPerSecond: Int32, nowMicros: Int64)
        async throws(StoreError) -> Int64
    {
        try await withDatabase { database throws(StoreError) in
            try database.reservePace(
                messageID: messageID, count: count, maxPerSecond: maxPerSecond, nowMicros: nowMicros)
        }
    }

    public func unfinishedMessages() async throws(StoreError) -> [MessageRecord] {
        try await withDatabase { database throws(StoreError) in try database.unfinishedMessages() }
    }

    // MARK: Fan-out chunks

    /// On PostgreSQL a claim passes over a message whose row another transaction holds for the
    /// moment (`SKIP LOCKED`: another worker's or instance's claim of the same message, a chunk of
    /// it finishing). Answering "nothing to do" then idled the worker until the next poll
    /// (`poll_ms`) in the middle of a fan-out (a 1M fan-out on PostgreSQL ran ~91 % busy instead of
    /// ~95 %), so while a message is left to plan but locked the claim tries again every ~2 ms, for
    /// at most ``lockedClaimPatience``.
    public func claimFanOutChunk(_ policy: FanOutLeasePolicy, filter: FanOutClaimFilter, now: Int64)
        async throws(StoreError) -> FanOutChunk?
    {
        let giveUp = ContinuousClock.now + Self.lockedClaimPatience
        while true {
            let (chunk, lockedOut) = try await withDatabase {
                database throws(StoreError) -> (FanOutChunk?, Bool) in
                let chunk = try database.claimFanOutChunk(policy, filter: filter, now: now)
                guard chunk == nil, Self.engine == .postgres else { return (chunk, false) }
                return (nil, try database.messageLeftToPlan(filter: filter))
            }
            guard lockedOut, ContinuousClock.now < giveUp else { return chunk }
            // Cancelled (stopping): no more tries; a cancelled sleep would not wait between them.
            do { try await Task.sleep(for: .milliseconds(2)) } catch { return nil }
        }
    }

    /// How long a claim that finds its message locked keeps trying (a claim or a chunk's end holds
    /// the row for one transaction, a few milliseconds; the poll finds what is left after this).
    static var lockedClaimPatience: Duration { .milliseconds(500) }

    public func renewFanOutLease(_ chunk: FanOutChunk, policy: FanOutLeasePolicy, now: Int64)
        async throws(StoreError) -> Int64
    {
        try await withDatabase { database throws(StoreError) in
            try database.renewFanOutLease(chunk, policy: policy, now: now)
        }
    }

    @discardableResult
    public func recordChunkProgress(
        _ chunk: FanOutChunk, policy: FanOutLeasePolicy, cursor: String, counts: ProgressCounts, state: MessageState,
        holds: FanOutHoldChanges, records: FanOutRecords, now: Int64
    ) async throws(StoreError) -> Int64 {
        try await withDatabase { database throws(StoreError) -> Int64 in
            try database.recordChunkProgress(
                chunk, policy: policy, cursor: cursor, counts: counts, state: state, holds: holds, records: records,
                now: now)
        }
    }

    public func heldRecipients(_ chunk: FanOutChunk) async throws(StoreError) -> [HeldRecipient] {
        try await withDatabase { database throws(StoreError) in try database.heldRecipients(chunk) }
    }

    public func releaseFanOutLeases(owner: String) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.releaseFanOutLeases(owner: owner) }
    }

    // MARK: Webhook outbox

    public func appendOutbox(_ events: [OutboxEvent]) async throws(StoreError) {
        guard !events.isEmpty else { return }
        try await withDatabase { database throws(StoreError) in
            try database.transaction { () throws(StoreError) in try database.appendOutbox(events) }
        }
    }

    public func takeWebhookBatch(webhook: String, owner: String, limit: Int, leaseMillis: Int64, now: Int64)
        async throws(StoreError) -> WebhookBatch?
    {
        try await withDatabase { database throws(StoreError) in
            try database.takeWebhookBatch(
                webhook: webhook, owner: owner, limit: limit, leaseMillis: leaseMillis, now: now)
        }
    }

    @discardableResult
    public func completeWebhookBatch(webhook: String, batch: String) async throws(StoreError) -> Int {
        try await withDatabase { database throws(StoreError) in
            try database.completeWebhookBatch(webhook: webhook, batch: batch)
        }
    }

    public func trimOutbox(webhook: String, maxPending: Int, createdBefore: Int64, limit: Int)
        async throws(StoreError) -> OutboxTrim
    {
        try await withDatabase { database throws(StoreError) in
            try database.trimOutbox(
                webhook: webhook, maxPending: maxPending, createdBefore: createdBefore, limit: limit)
        }
    }

    public func pendingOutbox(webhook: String) async throws(StoreError) -> Int {
        try await withDatabase { database throws(StoreError) in try database.pendingOutbox(webhook: webhook) }
    }

    public func releaseWebhookLeases(owner: String) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.releaseWebhookLeases(owner: owner) }
    }

    // MARK: Delivery log

    public func listDeliveries(
        messageID: String?, endpointID: String?, status: DeliveryLogRecord.Status?, cursor: String?, limit: Int
    ) async throws(StoreError) -> Page<DeliveryLogRecord> {
        try await withDatabase { database throws(StoreError) in
            try database.listDeliveries(
                messageID: messageID, endpointID: endpointID, status: status, cursor: cursor, limit: limit)
        }
    }

    public func purgeDeliveryLog(before: Int64, limit: Int) async throws(StoreError) -> Int {
        try await withDatabase { database throws(StoreError) in
            try database.purgeDeliveryLog(before: before, limit: limit)
        }
    }
}
