extension StoreSetting {
    /// The bench loaders' bulk load (`pushgate load-subscribers`, `pushgate bench --mode publish`):
    /// opens the store as a tool, subscribes an endpoint of `app` with `token(n)` for each n of
    /// `numbers` to `topic`, `batch` a transaction — the loader's memory and the store's write-ahead
    /// log stay the size of a batch, however many subscribers there are (one transaction of 10M grew
    /// SQLite's WAL past 3.9 GB and the loader to 2 GB) — with `pushgate import`'s page cache, then
    /// settles the load (``Store/settleBulkLoad()``: VACUUM on PostgreSQL, so a benchmark's first
    /// fan-out measures the fan-out rather than the aftermath of the load) and closes it. Answers the
    /// subscriptions created.
    public static func loadSubscribers(
        into setting: String, topic: String, app: String, numbers: Range<Int>, token: (Int) -> String,
        batch: Int = 50_000
    ) async throws(StoreError) -> Int {
        let store = try await openForTool(setting, cacheMiB: importCacheMiB)
        var created = 0
        var start = numbers.lowerBound
        do {
            while start < numbers.upperBound {
                let end = min(start + batch, numbers.upperBound)
                created += try await store.bulkCreateSubscribed(
                    topic: topic, app: app, tokens: (start..<end).map(token), now: 0)
                start = end
            }
            try await store.settleBulkLoad()
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        return created
    }
}
