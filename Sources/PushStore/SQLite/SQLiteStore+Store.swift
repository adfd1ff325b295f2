/// The `Store` requirements: each moves its arguments onto the store's queue and runs the matching
/// query there (the SQL lives in `Queries/`).
extension SQLiteStore {
    // MARK: Endpoints

    public func createEndpoint(app: String, normalizedToken: String, customUserData: String, now: Int64)
        async throws(StoreError) -> (endpoint: EndpointRecord, created: Bool)
    {
        try await withDatabase { database throws(StoreError) in
            try database.createEndpoint(app: app, token: normalizedToken, customUserData: customUserData, now: now)
        }
    }

    public func endpoint(id: String) async throws(StoreError) -> EndpointRecord {
        try await withDatabase { database throws(StoreError) in try database.endpoint(id: id).record }
    }

    public func updateEndpoint(id: String, normalizedToken: String?, enabled: Bool?, customUserData: String?)
        async throws(StoreError) -> EndpointRecord
    {
        try await withDatabase { database throws(StoreError) in
            try database.updateEndpoint(
                id: id, token: normalizedToken, enabled: enabled, customUserData: customUserData)
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

    public func listEndpoints(app: String?, cursor: String?, limit: Int) async throws(StoreError) -> Page<
        EndpointRecord
    > {
        try await withDatabase { database throws(StoreError) in
            try database.listEndpoints(app: app, cursor: cursor, limit: limit)
        }
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

    public func listTopics(cursor: String?, limit: Int) async throws(StoreError) -> Page<TopicRecord> {
        try await withDatabase { database throws(StoreError) in try database.listTopics(cursor: cursor, limit: limit) }
    }

    // MARK: Subscriptions

    public func subscribe(topic: String, endpointID: String, filterPolicyJSON: String)
        async throws(StoreError) -> (subscription: SubscriptionRecord, created: Bool)
    {
        try await withDatabase { database throws(StoreError) in
            try database.subscribe(topic: topic, endpointID: endpointID, filterPolicyJSON: filterPolicyJSON)
        }
    }

    public func unsubscribe(id: String) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.unsubscribe(id: id) }
    }

    public func subscription(id: String) async throws(StoreError) -> SubscriptionRecord {
        try await withDatabase { database throws(StoreError) in try database.subscription(id: id) }
    }

    public func listSubscriptions(topic: String?, endpointID: String?, cursor: String?, limit: Int)
        async throws(StoreError) -> Page<SubscriptionRecord>
    {
        try await withDatabase { database throws(StoreError) in
            try database.listSubscriptions(topic: topic, endpointID: endpointID, cursor: cursor, limit: limit)
        }
    }

    public func fanOutPage(topic: String, after cursor: String?, limit: Int) async throws(StoreError) -> Page<
        FanOutTarget
    > {
        try await withDatabase { database throws(StoreError) in
            try database.fanOutPage(topic: topic, after: cursor, limit: limit)
        }
    }

    public func bulkCreateSubscribed(topic: String, app: String, tokens: [String], now: Int64)
        async throws(StoreError) -> Int
    {
        try await withDatabase { database throws(StoreError) in
            try database.bulkCreateSubscribed(topic: topic, app: app, tokens: tokens, now: now)
        }
    }

    // MARK: Messages

    public func insertMessage(_ message: MessageRecord) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.insertMessage(message) }
    }

    public func message(id: String) async throws(StoreError) -> MessageRecord {
        try await withDatabase { database throws(StoreError) in try database.message(id: id) }
    }

    public func recordProgress(
        messageID: String, cursor: String, delivered: Int64, rejected: Int64, failed: Int64, skipped: Int64,
        total: Int64, state: MessageState
    ) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in
            try database.recordProgress(
                messageID: messageID, cursor: cursor, delivered: delivered, rejected: rejected, failed: failed,
                skipped: skipped, total: total, state: state)
        }
    }

    public func unfinishedMessages() async throws(StoreError) -> [MessageRecord] {
        try await withDatabase { database throws(StoreError) in try database.unfinishedMessages() }
    }
}
