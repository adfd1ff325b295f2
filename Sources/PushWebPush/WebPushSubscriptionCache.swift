import PushCore
import PushSync

/// Subscriptions already parsed, by their text: a token is routed (its origin) and then sent (its
/// keys), and the same browser subscription gets message after message; parsing it and loading its
/// point on the curve once serves them all. Bounded: emptied when full, as a fan-out's stream of distinct
/// subscriptions would otherwise grow it without end.
final class WebPushSubscriptionCache: Sendable {
    private let entries = Locked<[String: WebPushSubscription]>([:])
    let limit: Int

    init(limit: Int = 4096) { self.limit = max(1, limit) }

    /// `token` parsed and checked against `hosts` (the dialect's, so a cached entry was checked
    /// by the same policy), from the cache when it was seen before.
    func subscription(_ token: String, hosts: WebPushHostPolicy) throws(ValidationError) -> WebPushSubscription {
        if let hit = entries.withLock({ $0[token] }) { return hit }
        let parsed = try WebPushSubscription(token, field: "token", hosts: hosts)
        entries.withLock { entries in
            if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
            entries[token] = parsed
        }
        return parsed
    }

    var count: Int { entries.withLock { $0.count } }
}
