import PushPosix
import PushStore

/// Purges delivery-log rows older than `delivery_log.retention_hours`, in bounded batches (each its
/// own short transaction, so a large purge never holds the store for long), every minute.
final class DeliveryLogPurger: Sendable {
    static let batchSize = 1_000
    static let interval: Duration = .seconds(60)

    private let store: any Store
    private let retentionMillis: Int64
    private let clock: @Sendable () -> Int64
    private let metrics: GatewayMetrics?
    private let log: Log

    /// `clock`: Unix ms.
    init(
        store: any Store, retentionHours: Int, metrics: GatewayMetrics?, log: Log,
        clock: @escaping @Sendable () -> Int64 = unixMilliseconds
    ) {
        self.store = store
        retentionMillis = Int64(retentionHours) * 3_600_000
        self.clock = clock
        self.metrics = metrics
        self.log = log
    }

    /// Deletes everything past retention now, a batch at a time; answers how many rows.
    @discardableResult
    func purge() async -> Int {
        var purged = 0
        let before = clock() - retentionMillis
        while !Task.isCancelled {
            do {
                let deleted = try await store.purgeDeliveryLog(before: before, limit: Self.batchSize)
                purged += deleted
                guard deleted == Self.batchSize else { break }
                // Room for other store calls between batches.
                await Task.yield()
            } catch {
                log.warning("could not purge the delivery log", ["error": "\(error)"])
                break
            }
        }
        if purged > 0 { metrics?.deliveryLogRows("purged", purged) }
        return purged
    }

    /// Purges now and every ``interval`` until cancelled.
    func run() async {
        while !Task.isCancelled {
            await purge()
            try? await Task.sleep(for: Self.interval)
        }
    }
}
