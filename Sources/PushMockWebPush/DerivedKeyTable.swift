import PushSync
import PushTLS

/// Subscriptions' derived keys by id, so that a run of pushes to one subscription derives its
/// keys (an HKDF, a point multiplication and an EVP key) once. Bounded: emptied when full, which
/// costs the next pushes a derivation each and needs no bookkeeping per hit.
final class DerivedKeyTable: Sendable {
    private let seed: [UInt8]
    private let limit: Int
    private let keys = Locked<[String: SubscriptionKeys]>([:])

    init(seed: [UInt8], limit: Int) {
        self.seed = seed
        self.limit = max(1, limit)
    }

    func keys(for id: String) throws(TLSError) -> SubscriptionKeys {
        if let cached = keys.withLock({ $0[id] }) { return cached }
        // Derived outside the lock: other loops need not wait for it.
        let derived = try SubscriptionKeys.derive(seed: seed, id: id)
        keys.withLock { keys in
            if keys.count >= limit { keys.removeAll(keepingCapacity: true) }
            keys[id] = derived
        }
        return derived
    }
}
