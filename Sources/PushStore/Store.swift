/// Where Pushgate keeps its registry (endpoints, topics, subscriptions) and published messages with
/// their fan-out progress.
///
/// Deliberately narrow so another engine (PostgreSQL) can implement it: plain values in and out, no
/// SQL, page cursors as opaque strings. Semantics follow AWS SNS where SNS has them (see each method).
/// Times are passed in as Unix milliseconds so callers and tests control the clock.
///
/// The store checks only what keeps its own data consistent (identity, references, cursors).
/// Request validation — token format and case, the 2048-byte custom data limit, topic name syntax,
/// page size defaults — is the caller's.
///
/// Every write is committed durably before the call returns: Publish may answer once
/// `insertMessage` returns. Two engines implement it: ``SQLiteStore`` (embedded, one process) and
/// ``PostgresStore`` (several instances sharing one database); both run the same queries.
public protocol Store: Sendable {
    /// Whether the store works, from the calls made so far (see ``StoreHealth``).
    var health: StoreHealth { get }

    // MARK: Endpoints

    /// Registers a device, idempotently like SNS `CreatePlatformEndpoint`.
    ///
    /// The caller passes the token already normalized (APNs tokens lowercased): the store compares
    /// tokens byte for byte. With the same app and token:
    /// - the same `customUserData` answers the existing endpoint with `created == false`, even when
    ///   it is disabled (it is not re-enabled);
    /// - a different `customUserData` throws `alreadyExists` with `existingID` set and the message
    ///   `endpoint <id> already exists with the same token, but different custom_user_data`.
    /// `enabled` nil: a new endpoint is enabled, and an existing one's state is not compared
    /// (as `CreateEndpoint` does); true or false: a new one is made so in the same insert, and an
    /// existing one in the other state throws `alreadyExists` naming it (SNS's `Enabled` attribute).
    /// `userID` (`""`: none) is not part of the identity: an existing endpoint answered moves to a
    /// non-empty `userID` that differs (a device registered again by its new owner), and keeps its
    /// user when `userID` is empty.
    func createEndpoint(
        app: String, normalizedToken: String, customUserData: String, userID: String, enabled: Bool?, now: Int64
    ) async throws(StoreError) -> (endpoint: EndpointRecord, created: Bool)

    /// The endpoint with this id; `notFound` if there is none.
    func endpoint(id: String) async throws(StoreError) -> EndpointRecord

    /// Changes the fields that are not `nil`. A new token must not belong to another endpoint of
    /// the same app (`alreadyExists` naming it). `enabled: true` clears `disabledReason`; a token
    /// change alone does not re-enable (as in SNS). `notFound` if there is no such endpoint.
    /// `userID` `""` clears the endpoint's user.
    func updateEndpoint(
        id: String, normalizedToken: String?, enabled: Bool?, customUserData: String?, userID: String?
    ) async throws(StoreError) -> EndpointRecord

    /// Token hygiene: disables the endpoint and records why (the latest reason wins). Idempotent;
    /// `notFound` if there is no such endpoint.
    func disableEndpoint(id: String, reason: String) async throws(StoreError)

    /// Disables many endpoints in one transaction (a fan-out chunk's invalid tokens). Ids that no
    /// longer exist are ignored: the endpoint was deleted while its push was in flight.
    func disableEndpoints(_ endpoints: [(id: String, reason: String)]) async throws(StoreError)

    /// Deletes the endpoint and its subscriptions (unlike SNS, which leaves subscriptions behind).
    /// Idempotent.
    func deleteEndpoint(id: String) async throws(StoreError)

    /// Endpoints in creation order, optionally only one app's and/or one user's, or the one with
    /// `token` (normalized; only with `app`), and only those of `apps` when given (a key's apps).
    /// `limit` is 1...10,000; a cursor from another listing or a malformed one throws
    /// `invalidArgument`. `nil` or `""` starts at the beginning.
    func listEndpoints(app: String?, userID: String?, token: String?, apps: [String]?, cursor: String?, limit: Int)
        async throws(StoreError) -> Page<EndpointRecord>

    /// Whether the user has an endpoint, enabled or not, in one of `apps` (empty: in any app).
    func hasEndpoints(userID: String, apps: [String]) async throws(StoreError) -> Bool

    // MARK: Topics

    /// Creates the topic, or answers the existing one. Idempotent.
    func createTopic(name: String) async throws(StoreError) -> TopicRecord

    /// Deletes the topic and all its subscriptions. Idempotent.
    func deleteTopic(name: String) async throws(StoreError)

    /// Whether a topic with this name exists.
    func topicExists(name: String) async throws(StoreError) -> Bool

    /// Topics in creation order; cursors and limits as for `listEndpoints`. With
    /// `countingSubscribers`, each with its subscription count (a read of its index entries).
    func listTopics(cursor: String?, limit: Int, countingSubscribers: Bool) async throws(StoreError)
        -> Page<TopicRecord>

    // MARK: Broadcast channels

    /// Records a channel APNs created for `channel.app`; recording the same (app, id) again keeps
    /// the first record.
    func insertChannel(_ channel: ChannelRecord) async throws(StoreError)

    /// The channel, or nil when the app has no channel with that id (never created, or deleted).
    func channel(app: String, channelID: String) async throws(StoreError) -> ChannelRecord?

    /// Forgets the channel; false when there was none.
    func deleteChannel(app: String, channelID: String) async throws(StoreError) -> Bool

    /// The app's channels in creation order, `limit` (1...1000) at a time.
    func listChannels(app: String, cursor: String?, limit: Int) async throws(StoreError) -> Page<ChannelRecord>

    // MARK: Subscriptions

    /// Subscribes the endpoint to the topic; both must exist (`notFound` naming the missing one).
    /// Idempotent per (topic, endpoint): an existing subscription is answered with
    /// `created == false`, and its filter policy replaced by `filterPolicyJSON` if that differs
    /// (the latest Subscribe wins, as a `SetSubscriptionAttributes` would), and its scope likewise
    /// (`""`: message attributes; `MessageBody`).
    func subscribe(topic: String, endpointID: String, filterPolicyJSON: String, filterPolicyScope: String)
        async throws(StoreError) -> (subscription: SubscriptionRecord, created: Bool)

    /// Changes the fields of subscription `id` that are not nil (each written alone, so two
    /// changes of different fields never undo each other); `notFound` if there is no such
    /// subscription (it is never made again, unlike `subscribe`).
    func updateSubscription(id: String, filterPolicyJSON: String?, filterPolicyScope: String?)
        async throws(StoreError) -> SubscriptionRecord

    /// Removes the subscription. Idempotent.
    func unsubscribe(id: String) async throws(StoreError)

    /// The subscription with this id; `notFound` if there is none.
    func subscription(id: String) async throws(StoreError) -> SubscriptionRecord

    /// Subscriptions in creation order, optionally only one topic's and/or one endpoint's (an unknown
    /// topic or endpoint gives an empty page), only of endpoints of `apps` when given. Cursors and
    /// limits as for `listEndpoints`.
    func listSubscriptions(topic: String?, endpointID: String?, apps: [String]?, cursor: String?, limit: Int)
        async throws(StoreError) -> Page<SubscriptionRecord>

    /// The next `limit` recipients of a topic or user after `cursor` (`nil` or `""`: from the start)
    /// and up to `end` included (`nil`: to the end; a chunk's range). A topic's are its subscriptions
    /// joined with their endpoints, in subscription creation order; a user's are its endpoints in the
    /// target's apps, in creation order (no subscription, so no filter policy). Disabled endpoints
    /// are included. A topic that does not exist (or was deleted mid-fan-out) gives an empty last
    /// page. Recipients added during a fan-out are seen if they sort after the cursor and within the
    /// range.
    func fanOutPage(_ target: MessageTarget, after cursor: String?, through end: String?, limit: Int)
        async throws(StoreError) -> Page<FanOutTarget>

    /// A bulk loader for tests and benchmarks: creates the topic if needed, an endpoint (no custom
    /// data) for every token not yet registered with `app`, and a subscription for every endpoint not
    /// yet subscribed, all in one transaction (``importEndpoints(_:now:)``'s). Returns how many
    /// subscriptions it created.
    func bulkCreateSubscribed(topic: String, app: String, tokens: [String], now: Int64) async throws(StoreError) -> Int

    /// Makes rows ready for ``importEndpoints(_:)`` on the calling thread, not the store's: an
    /// import prepares its next batch while the store writes the one before (see ``ImportBatch``).
    /// `now`: the new endpoints' creation time.
    func prepareImport(_ rows: [EndpointImport], now: Int64) -> ImportBatch

    /// Imports a batch of endpoints in one transaction (see ``EndpointImport``): each row's endpoint
    /// is created (enabled unless the row says otherwise) or, when its app already has the token,
    /// kept with its id and given the fields the row sets (a change of `enabled` clears the disabled
    /// reason); its topics are created when missing and it is subscribed to each (existing
    /// subscriptions kept). Rows repeating an (app, token) count as one, later fields winning.
    /// Idempotent: the same rows again change nothing. Tokens must be normalized and fields valid
    /// (the caller checks, as for `createEndpoint`).
    func importEndpoints(_ batch: ImportBatch) async throws(StoreError) -> ImportCounts

    /// After a bulk load (`pushgate import`, the bench loaders): readies the new rows for reading.
    /// PostgreSQL: `VACUUM (ANALYZE)` of the endpoints, topics and subscriptions, which sets the new
    /// rows' hint bits and visibility map and gives the planner their statistics; left undone, the
    /// first fan-out over them sets every row's hint bits (dirtying each page it reads, to be
    /// written out again) while autovacuum arrives to do the same. SQLite: nothing to do.
    func settleBulkLoad() async throws(StoreError)

    /// The next `limit` endpoints (of `app`, or all) after `cursor`, in creation order, each with the
    /// names of its topics in subscription order: what `pushgate export` writes.
    func exportEndpoints(app: String?, cursor: String?, limit: Int) async throws(StoreError) -> Page<ExportedEndpoint>

    // MARK: Messages

    /// Stores a newly published message. Exactly one of `topic`, `endpointID` and `userID` must be
    /// set, and the state be `accepted`, or `scheduled` with a `deliverAt` (`invalidArgument`); a
    /// duplicate id throws `alreadyExists`. Durable when this returns. A scheduled message is
    /// claimable from its `deliverAt` on.
    func insertMessage(_ message: MessageRecord) async throws(StoreError)

    /// The message with this id; `notFound` if there is none.
    func message(id: String) async throws(StoreError) -> MessageRecord

    /// Just the state of the message with this id (cheap: what a chunk being worked polls to
    /// notice a cancel); `notFound` if there is none.
    func messageState(id: String) async throws(StoreError) -> MessageState

    /// Messages newest first, optionally only those in `state` and/or published to `topic`, with
    /// their counts. Cursors and limits as for `listEndpoints`.
    func listMessages(state: MessageState?, topic: String?, cursor: String?, limit: Int)
        async throws(StoreError) -> Page<MessageRecord>

    /// Cancels a scheduled, accepted or running message and answers it: its state is `cancelled`
    /// at once and no chunk is planned any more; recipients never planned and the chunks nobody
    /// works now (parked, or their holder's lease ran out) are counted `cancelled` (and in
    /// `total`); a chunk being worked adds its own unsent recipients when its holder records
    /// progress with state `cancelled`. `notFound` for an unknown id; `failedPrecondition` for a
    /// finished (completed, expired or cancelled) message.
    ///
    /// `notify`: webhooks that get a `message_cancelled` event, written in the same transaction.
    /// Whatever finishes a message (its last chunk, a cancel with no chunk being worked, the end of
    /// a cancelled message's last chunk) writes a `message_finished` event for each webhook in its
    /// `notify`, in the same transaction.
    func cancelMessage(id: String, notify: [String], now: Int64) async throws(StoreError) -> MessageRecord

    /// Reserves `count` sends of a message capped at `maxPerSecond`, shared by every instance:
    /// answers the Unix µs at which the reserved slot starts (now or later). Slots of one message
    /// never overlap, so sending each reservation no earlier than its start keeps the cap.
    /// `notFound` for an unknown message.
    func reservePace(messageID: String, count: Int, maxPerSecond: Int32, nowMicros: Int64)
        async throws(StoreError) -> Int64

    // MARK: Fan-out chunks

    /// Claims fan-out work for `policy.owner`, leased until `now + policy.leaseMillis`: a chunk whose
    /// lease ran out (its owner died or stalled), or else a new chunk of an unfinished message
    /// (`policy.chunkSize` subscriptions of its topic, or the rest of it; a direct publish is one
    /// chunk). The first chunk moves the message to `fanningOut`. Instances sharing a database never
    /// get the same chunk at once (PostgreSQL: `FOR UPDATE SKIP LOCKED`). `nil`: nothing to do.
    /// Scheduled messages whose `deliverAt` has come become claimable first. `filter` passes over
    /// some messages (see ``FanOutClaimFilter``).
    func claimFanOutChunk(_ policy: FanOutLeasePolicy, filter: FanOutClaimFilter, now: Int64)
        async throws(StoreError) -> FanOutChunk?

    /// Extends the lease of a chunk this claim holds to `now + policy.leaseMillis` and answers the new
    /// expiry. `conflict` if the chunk was taken over (by another instance, or another claim of this
    /// one) or is finished: stop working it.
    func renewFanOutLease(_ chunk: FanOutChunk, policy: FanOutLeasePolicy, now: Int64) async throws(StoreError) -> Int64

    /// Records a chunk's progress in one transaction: adds `counts` to the chunk's, moves its resume
    /// cursor, renews the lease; `state` `completed` or `expired` finishes the chunk, and the message
    /// with its last chunk (expired if any chunk expired). A message's counts are the sum over its
    /// chunks, so `message(id:)` is consistent whichever instance asks. `state` `cancelled` ends the
    /// chunk of a cancelled message: its recipients after `cursor` and those it holds are counted
    /// `cancelled`. A claim that took a chunk over
    /// resumes after its last recorded cursor: delivery is at-least-once, and the duplicate window is
    /// the pages in flight when the previous holder stopped. `conflict` if `chunk.claim` no longer
    /// holds the chunk (nothing is recorded); `notFound` for an unknown message or chunk;
    /// `invalidArgument` for negative counts or `state` `accepted`.
    ///
    /// `holds` changes the chunk's held recipients (``FanOutHold``) in the same transaction, and may
    /// park the chunk instead of finishing it: it then stays unfinished, and is claimable again
    /// (``claimFanOutChunk(_:now:)``, with its holds and parkings) once `parkUntil` has passed.
    /// Answers how many recipients the chunk holds now.
    ///
    /// `records` are written in the same transaction: endpoints disabled, delivery-log rows and
    /// webhook events.
    @discardableResult
    func recordChunkProgress(
        _ chunk: FanOutChunk, policy: FanOutLeasePolicy, cursor: String, counts: ProgressCounts, state: MessageState,
        holds: FanOutHoldChanges, records: FanOutRecords, now: Int64
    ) async throws(StoreError) -> Int64

    /// The recipients a chunk holds (``FanOutHold``), with their endpoints as they are now.
    func heldRecipients(_ chunk: FanOutChunk) async throws(StoreError) -> [HeldRecipient]

    /// Ends `owner`'s leases at once, so other instances take its unfinished chunks over without
    /// waiting for them to run out (a graceful stop).
    func releaseFanOutLeases(owner: String) async throws(StoreError)

    /// Messages still `accepted` or `fanningOut`, in publish order: what to resume after a restart.
    func unfinishedMessages() async throws(StoreError) -> [MessageRecord]

    // MARK: Webhook outbox

    /// Writes events to their webhooks' outboxes (durable when this returns).
    func appendOutbox(_ events: [OutboxEvent]) async throws(StoreError)

    /// Takes (or renews) `owner`'s lease on sending the webhook's batches until `now + leaseMillis`,
    /// then answers its oldest batch: the one formed before and not yet completed (the same events
    /// and id), or a new one of the oldest `limit` events. nil: another owner's lease runs (with
    /// several instances, one sends each webhook's batches); an empty batch: nothing pending.
    func takeWebhookBatch(webhook: String, owner: String, limit: Int, leaseMillis: Int64, now: Int64)
        async throws(StoreError) -> WebhookBatch?

    /// Removes a batch that was answered 2xx or refused for good; answers how many events it held.
    @discardableResult
    func completeWebhookBatch(webhook: String, batch: String) async throws(StoreError) -> Int

    /// Drops at most `limit` of the webhook's events not in a batch: those written before
    /// `createdBefore`, then its oldest beyond `maxPending`. Call again while it drops `limit`.
    /// The next batch formed reports what was dropped (``WebhookBatch/dropped``).
    func trimOutbox(webhook: String, maxPending: Int, createdBefore: Int64, limit: Int) async throws(StoreError)
        -> OutboxTrim

    /// Events waiting for the webhook.
    func pendingOutbox(webhook: String) async throws(StoreError) -> Int

    /// Ends `owner`'s webhook leases, so another instance sends at once (a graceful stop).
    func releaseWebhookLeases(owner: String) async throws(StoreError)

    // MARK: Delivery log

    /// Log rows newest first, by message, endpoint and/or status (none: all). Cursors and limits as
    /// for `listEndpoints`.
    func listDeliveries(
        messageID: String?, endpointID: String?, status: DeliveryLogRecord.Status?, cursor: String?, limit: Int
    ) async throws(StoreError) -> Page<DeliveryLogRecord>

    /// Deletes up to `limit` rows whose time is before `before`, oldest first; answers how many.
    func purgeDeliveryLog(before: Int64, limit: Int) async throws(StoreError) -> Int

    // MARK: Lifecycle

    /// Waits for calls already made, then releases the database. Later calls throw `internal`.
    func close() async
}

extension Store {
    /// Prepares and imports one batch (``prepareImport(_:now:)``, ``importEndpoints(_:)``).
    public func importEndpoints(_ rows: [EndpointImport], now: Int64) async throws(StoreError) -> ImportCounts {
        try await importEndpoints(prepareImport(rows, now: now))
    }

    /// An endpoint made enabled, an existing one answered whatever its state.
    public func createEndpoint(app: String, normalizedToken: String, customUserData: String, now: Int64)
        async throws(StoreError) -> (endpoint: EndpointRecord, created: Bool)
    {
        try await createEndpoint(
            app: app, normalizedToken: normalizedToken, customUserData: customUserData, userID: "", enabled: nil,
            now: now)
    }

    /// An endpoint without a user.
    public func createEndpoint(
        app: String, normalizedToken: String, customUserData: String, enabled: Bool?, now: Int64
    ) async throws(StoreError) -> (endpoint: EndpointRecord, created: Bool) {
        try await createEndpoint(
            app: app, normalizedToken: normalizedToken, customUserData: customUserData, userID: "", enabled: enabled,
            now: now)
    }

    /// Changes the endpoint's other fields, its user left alone.
    public func updateEndpoint(id: String, normalizedToken: String?, enabled: Bool?, customUserData: String?)
        async throws(StoreError) -> EndpointRecord
    {
        try await updateEndpoint(
            id: id, normalizedToken: normalizedToken, enabled: enabled, customUserData: customUserData, userID: nil)
    }

    /// Endpoints of every user.
    public func listEndpoints(app: String?, cursor: String?, limit: Int) async throws(StoreError) -> Page<
        EndpointRecord
    > {
        try await listEndpoints(app: app, userID: nil, token: nil, apps: nil, cursor: cursor, limit: limit)
    }

    /// Subscriptions of endpoints of every app.
    public func listSubscriptions(topic: String?, endpointID: String?, cursor: String?, limit: Int)
        async throws(StoreError) -> Page<SubscriptionRecord>
    {
        try await listSubscriptions(topic: topic, endpointID: endpointID, apps: nil, cursor: cursor, limit: limit)
    }

    /// Endpoints of every token.
    public func listEndpoints(app: String?, userID: String?, cursor: String?, limit: Int) async throws(StoreError)
        -> Page<EndpointRecord>
    {
        try await listEndpoints(app: app, userID: userID, token: nil, apps: nil, cursor: cursor, limit: limit)
    }

    /// Topics without their counts.
    public func listTopics(cursor: String?, limit: Int) async throws(StoreError) -> Page<TopicRecord> {
        try await listTopics(cursor: cursor, limit: limit, countingSubscribers: false)
    }

    /// Any work.
    public func claimFanOutChunk(_ policy: FanOutLeasePolicy, now: Int64) async throws(StoreError) -> FanOutChunk? {
        try await claimFanOutChunk(policy, filter: .any, now: now)
    }

    /// A topic's recipients.
    public func fanOutPage(topic: String, after cursor: String?, through end: String?, limit: Int)
        async throws(StoreError) -> Page<FanOutTarget>
    {
        try await fanOutPage(.topic(topic), after: cursor, through: end, limit: limit)
    }

    /// A subscription whose policy (if any) applies to message attributes.
    public func subscribe(topic: String, endpointID: String, filterPolicyJSON: String)
        async throws(StoreError) -> (subscription: SubscriptionRecord, created: Bool)
    {
        try await subscribe(
            topic: topic, endpointID: endpointID, filterPolicyJSON: filterPolicyJSON, filterPolicyScope: "")
    }

    /// Progress without holds.
    public func recordChunkProgress(
        _ chunk: FanOutChunk, policy: FanOutLeasePolicy, cursor: String, counts: ProgressCounts, state: MessageState,
        now: Int64
    ) async throws(StoreError) {
        try await recordChunkProgress(
            chunk, policy: policy, cursor: cursor, counts: counts, state: state, holds: .none, records: .none, now: now)
    }

    /// A cancel that tells no webhook.
    public func cancelMessage(id: String, now: Int64) async throws(StoreError) -> MessageRecord {
        try await cancelMessage(id: id, notify: [], now: now)
    }

    /// Progress with holds and nothing else to write.
    @discardableResult
    public func recordChunkProgress(
        _ chunk: FanOutChunk, policy: FanOutLeasePolicy, cursor: String, counts: ProgressCounts, state: MessageState,
        holds: FanOutHoldChanges, now: Int64
    ) async throws(StoreError) -> Int64 {
        try await recordChunkProgress(
            chunk, policy: policy, cursor: cursor, counts: counts, state: state, holds: holds, records: .none, now: now)
    }
}
