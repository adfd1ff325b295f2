import PushCore
import PushDelivery
import PushMetrics
import PushStore

/// Recipients held for a provider that cannot take them (README, "Provider outages"): a page holds
/// them instead of FAILing them (``FanOut/holdsFor(_:)``), the chunk parks when its pages are done,
/// and whoever claims it next sends to them first.
extension FanOut {
    /// The chunk's pages are done: it finishes, or parks while recipients are held for their
    /// provider, to be claimed again after a backoff (2 s doubling to 30 s, jittered; never past
    /// the hold limit) by this instance or another.
    func finishOrPark(
        _ chunk: FanOutChunk, cursor: String, plan: MessagePlan, held: Int64
    ) async throws(StoreError) {
        let now = unixMilliseconds()
        guard held > 0 else {
            try await store.recordChunkProgress(
                chunk, policy: policy, cursor: cursor, counts: ProgressCounts(),
                state: plan.expired ? .expired : .completed, holds: .none, now: now)
            return
        }
        let backoff = Double(min(30_000, 2_000 << min(chunk.parkings, 4))) * Double.random(in: 0.8...1.2)
        let until = max(now + 1_000, min(now + Int64(backoff), holdDeadline(chunk.message)))
        try await store.recordChunkProgress(
            chunk, policy: policy, cursor: cursor, counts: ProgressCounts(), state: .fanningOut,
            holds: FanOutHoldChanges(parkUntil: until), now: now)
        log.info(
            "fan-out waiting for the provider",
            [
                "message_id": chunk.message.id, "chunk": "\(chunk.number)", "held": "\(held)",
                "retry_in_ms": "\(until - now)",
            ])
    }

    /// Unix ms after which held recipients are FAILED: `max_hold_seconds` after the publish.
    private func holdDeadline(_ message: MessageRecord) -> Int64 {
        message.publishedAt + Int64(settings.maxHoldSeconds) * 1000
    }

    /// Sends to the recipients a previous claim of the chunk held (before its pages): the ones the
    /// provider takes now are counted; the ones it still cannot take stay held; past the hold limit
    /// they are FAILED with their last reason.
    func resumeHolds(_ chunk: FanOutChunk, plan: inout MessagePlan) async throws(StoreError) -> Int64 {
        let held = try await store.heldRecipients(chunk)
        let released = held.map(\.hold.endpointID)
        var counts = FanOutCounts(total: 0)
        if unixMilliseconds() >= holdDeadline(chunk.message) {
            for recipient in held {
                guard let endpoint = recipient.endpoint else {
                    counts.skipped += 1
                    continue
                }
                counts.failed += 1
                let result = DeliveryResult(
                    notificationIndex: 0, token: endpoint.token, status: .failed, code: .providerUnavailable,
                    reason: recipient.hold.reason + " (held for the provider for fanout.max_hold_seconds, "
                        + "\(settings.maxHoldSeconds) s after the publish)")
                events.result(result, app: endpoint.app, messageID: chunk.message.id, endpointID: endpoint.id)
                metrics?.notifications(app: endpoint.app)?.record(CollectionOfOne(result))
                metrics?.fanOutHolds(app: endpoint.app, event: "given_up").increment()
            }
            log.warning(
                "fan-out gave up waiting for the provider",
                [
                    "message_id": chunk.message.id, "chunk": "\(chunk.number)", "failed": "\(counts.failed)",
                    "max_hold_seconds": "\(settings.maxHoldSeconds)",
                ])
            return try await commit(chunk, cursor: chunk.cursor, counts: counts, releasing: released)
        }
        var targets: [FanOutTarget] = []
        for recipient in held {
            guard let endpoint = recipient.endpoint else {
                counts.skipped += 1  // deleted while held
                continue
            }
            targets.append(
                FanOutTarget(
                    subscription: SubscriptionRecord(id: "", topic: "", endpointID: endpoint.id, filterPolicyJSON: ""),
                    endpoint: endpoint, cursor: ""))
        }
        var prepared = prepare(targets, plan: &plan, clients: live.clients)
        prepared.counts.total = 0  // counted when first sent
        counts.add(await send(prepared, messageID: chunk.message.id))
        if Task.isCancelled { return Int64(held.count) }
        return try await commit(chunk, cursor: chunk.cursor, counts: counts, releasing: released)
    }

    /// Whether a result says the provider could not take the message now (unreachable, 5xx/429
    /// after the engine's retries, connections lost, refused streams, no credential to be had):
    /// worth holding for. Not: a TTL that ran out, a wrong platform, a stopping gateway.
    static func holdsFor(_ result: DeliveryResult) -> Bool {
        guard result.status == .failed else { return false }
        return ![.expired, .wrongPlatform, .shutdown].contains(result.code)
    }
}
