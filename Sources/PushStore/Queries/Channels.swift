/// Broadcast channel queries; see `Store` for the semantics.
extension SQLDatabase {
    func insertChannel(_ channel: ChannelRecord) throws(StoreError) {
        // APNs issues each id once; a repeat (a create answered twice by a retry) keeps the first row.
        try run(
            "INSERT INTO channels (app, channel_id, storage_policy, created_at) VALUES (?, ?, ?, ?) "
                + "ON CONFLICT (app, channel_id) DO NOTHING",
            [
                .text(channel.app), .text(channel.channelID), .integer(Int64(channel.storagePolicy)),
                .integer(channel.createdAt),
            ])
    }

    func channel(app: String, channelID: String) throws(StoreError) -> ChannelRecord? {
        try row(
            "SELECT app, channel_id, storage_policy, created_at FROM channels WHERE app = ? AND channel_id = ?",
            [.text(app), .text(channelID)]
        ) { Self.channelRecord($0) }
    }

    func deleteChannel(app: String, channelID: String) throws(StoreError) -> Bool {
        try run("DELETE FROM channels WHERE app = ? AND channel_id = ?", [.text(app), .text(channelID)]) > 0
    }

    func listChannels(app: String, cursor: String?, limit: Int) throws(StoreError) -> Page<ChannelRecord> {
        try PageCursor.check(limit: limit)
        let after = try PageCursor.decode(cursor, as: .channels)
        let fetched = try rows(
            "SELECT seq, app, channel_id, storage_policy, created_at FROM channels WHERE app = ? AND seq > ? "
                + "ORDER BY seq LIMIT ?", [.text(app), .integer(after), .int(limit + 1)]
        ) { row in
            (
                seq: row.int64(0),
                record: ChannelRecord(
                    app: row.text(1), channelID: row.text(2), storagePolicy: Int(row.int64(3)),
                    createdAt: row.int64(4))
            )
        }
        let page = PageCursor.page(fetched, limit: limit, kind: .channels) { $0.seq }
        return Page(items: page.items.map(\.record), nextCursor: page.nextCursor)
    }

    private static func channelRecord(_ row: Row) -> ChannelRecord {
        ChannelRecord(
            app: row.text(0), channelID: row.text(1), storagePolicy: Int(row.int64(2)), createdAt: row.int64(3))
    }
}

extension SQLStore {
    public func insertChannel(_ channel: ChannelRecord) async throws(StoreError) {
        try await withDatabase { database throws(StoreError) in try database.insertChannel(channel) }
    }

    public func channel(app: String, channelID: String) async throws(StoreError) -> ChannelRecord? {
        try await withDatabase { database throws(StoreError) in
            try database.channel(app: app, channelID: channelID)
        }
    }

    public func deleteChannel(app: String, channelID: String) async throws(StoreError) -> Bool {
        try await withDatabase { database throws(StoreError) in
            try database.deleteChannel(app: app, channelID: channelID)
        }
    }

    public func listChannels(app: String, cursor: String?, limit: Int) async throws(StoreError) -> Page<ChannelRecord> {
        try await withDatabase { database throws(StoreError) in
            try database.listChannels(app: app, cursor: cursor, limit: limit)
        }
    }
}
