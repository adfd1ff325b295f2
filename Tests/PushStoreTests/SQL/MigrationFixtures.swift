import PushStore
import Testing

/// A version-6 database with a little of everything later steps rebuild, extend or copy, written as SQL
/// both engines take, and what a store opened on it afterwards must answer.
enum MigrationFixtures {
    static let version6Rows = """
        INSERT INTO topics (name) VALUES ('news');
        INSERT INTO endpoints (id, app, token, enabled, custom_user_data, created_at, disabled_reason)
        VALUES ('e1', 'ios', 'a', 1, 'data', 5, ''), ('e2', 'ios', 'b', 0, '', 6, 'Unregistered');
        INSERT INTO subscriptions (id, topic_seq, endpoint_seq, filter_policy_json)
        SELECT 's' || e.id, t.seq, e.seq, '' FROM endpoints e, topics t;
        INSERT INTO messages (id, topic, message, message_structure, published_at, state, total, delivered,
                              rejected, failed, skipped, cursor, planned_after, chunks, planned)
        VALUES ('old', 'news', 'hi', '', 7, 'fanningOut', 0, 0, 0, 0, 0, '', 0, 1, 1);
        INSERT INTO messages (id, endpoint_id, message, message_structure, published_at, state, total, delivered,
                              rejected, failed, skipped, cursor)
        VALUES ('done', 'e1', 'yo', '', 8, 'completed', 1, 1, 0, 0, 0, '');
        INSERT INTO message_attributes (message_seq, name, value)
        SELECT seq, 'kind', 'news' FROM messages WHERE id = 'old';
        INSERT INTO fanout_chunks (message_seq, number, range_after, range_last, cursor, state, lease_owner,
                                   lease_expires_at, total, delivered, rejected, failed, skipped, holds, parkings)
        SELECT seq, 0, 0, NULL, 0, 'working', '', 0, 1, 0, 0, 0, 0, 1, 1 FROM messages WHERE id = 'old';
        INSERT INTO fanout_holds (message_seq, number, endpoint_id, reason)
        SELECT seq, 0, 'e1', 'Unavailable' FROM messages WHERE id = 'old';
        """

    static func expectVersion6Rows(in store: any Store) async throws {
        let old = try await store.message(id: "old")
        #expect(old.state == .fanningOut && old.topic == "news" && old.attributes == ["kind": "news"])
        #expect(old.total == 1 && old.waitingForProvider == 1 && old.deliverAt == 0 && old.userID == nil)
        #expect(old.notify.isEmpty)
        let done = try await store.message(id: "done")
        #expect(done.state == .completed && done.endpointID == "e1" && done.delivered == 1)
        let endpoints = try await store.listEndpoints(app: nil, cursor: nil, limit: 10).items
        #expect(endpoints.map(\.id) == ["e1", "e2"] && endpoints.allSatisfy { $0.userID.isEmpty })
        #expect(endpoints[1].disabledReason == "Unregistered" && endpoints[0].customUserData == "data")
        #expect(
            try await store.listSubscriptions(topic: "news", endpointID: nil, cursor: nil, limit: 10).items.count == 2)
        // The fan-out reads each endpoint as it is (on PostgreSQL from the copies its step 9 made).
        let page = try await store.fanOutPage(topic: "news", after: nil, through: nil, limit: 10).items
        #expect(page.map(\.endpoint.id) == ["e1", "e2"] && page.map(\.endpoint.token) == ["a", "b"])
        #expect(page.map(\.endpoint.enabled) == [true, false] && page.allSatisfy { $0.endpoint.app == "ios" })
        // The chunk and its hold came through: claimed again, the held recipient with it.
        let policy = FanOutLeasePolicy(owner: "new", leaseMillis: 1000, chunkSize: 10)
        let chunk = try #require(try await store.claimFanOutChunk(policy, now: 100))
        #expect(chunk.message.id == "old" && chunk.holds == 1 && chunk.parkings == 1)
        #expect(try await store.heldRecipients(chunk).map(\.hold.endpointID) == ["e1"])
        // The new states and targets are writable.
        let cancelled = try await store.cancelMessage(id: "old", now: 200)
        #expect(cancelled.state == .cancelled)
        try await store.insertMessage(
            MessageRecord(id: "new", userID: "u", message: "x", publishedAt: 9, deliverAt: 10, state: .scheduled))
        #expect(try await store.message(id: "new").state == .scheduled)
        // Step 8's outbox and log are there, empty.
        try await store.appendOutbox([OutboxEvent(webhook: "crm", json: "{}", createdAt: 1)])
        #expect(try await store.pendingOutbox(webhook: "crm") == 1)
        #expect(
            try await store.listDeliveries(messageID: nil, endpointID: nil, status: nil, cursor: nil, limit: 10).items
                .isEmpty)
    }
}
