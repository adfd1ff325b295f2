/// The `store` setting: an SQLite file path, or a PostgreSQL URL (`postgres://…` or
/// `postgresql://…`, libpq's URI syntax) that several instances share.
public enum StoreSetting {
    /// Opens the store the setting names, bringing its schema up to date.
    public static func open(_ setting: String) async throws(StoreError) -> any Store {
        if PostgresStore.isPostgresURL(setting) { return try await PostgresStore.open(url: setting) }
        return try await SQLiteStore.open(path: setting)
    }

    /// Opens the store for a tool that may run beside a gateway on it (import, export, the bench
    /// loaders): a schema older than this build's is refused, not upgraded under the gateways; an
    /// SQLite file's leases stay with the gateway that holds them, and its page cache is `cacheMiB`
    /// for bulk loading.
    public static func openForTool(_ setting: String, cacheMiB: Int = toolCacheMiB) async throws(StoreError)
        -> any Store
    {
        if PostgresStore.isPostgresURL(setting) { return try await PostgresStore.open(url: setting, owner: false) }
        return try await SQLiteStore.open(path: setting, owner: false, cacheMiB: cacheMiB)
    }

    /// A tool's SQLite page cache (export's reads; 1M rows once imported at 18k rows/s with SQLite's
    /// default 2 MiB, most of it the kernel copying spilled pages out and back; docs/import.md).
    public static let toolCacheMiB = 32

    /// `pushgate import`'s and the bench loaders': the token index's key is a digest, so each row
    /// lands on its own page of it whatever the tokens' order, and a batch of 50,000 rows touches
    /// much of it; with 32 MiB those pages spill mid-transaction and are read back (1M rows in no
    /// order in batches of 100,000: 0.88x the time with 128 MiB; 3M rows by `load-subscribers`,
    /// 128 MiB and 50,000 a transaction against 32 MiB and 10,000: 44.7 s against 69.4 s, 6.6 GB
    /// written against 30 GB).
    public static let importCacheMiB = 128

    /// The setting as logs may show it (a URL's password removed).
    public static func redacted(_ setting: String) -> String {
        PostgresStore.isPostgresURL(setting) ? PostgresStore.redactedURL(setting) : setting
    }
}
