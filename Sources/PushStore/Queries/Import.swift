/// Bulk import and export of endpoints with their topics (`pushgate import`/`export`, the bench
/// loaders); see `Store.importEndpoints` for the semantics.
extension SQLDatabase {
    /// One batch in one transaction: a crash leaves it wholly in or wholly out.
    func importEndpoints(_ batch: ImportBatch) throws(StoreError) -> ImportCounts {
        guard batch.engine == engine else {
            throw StoreError(.internal, message: "an import batch prepared for \(batch.engine) given to \(engine)")
        }
        var counts = try withoutForeignKeyChecksOnSQLite { () throws(StoreError) -> ImportCounts in
            try transaction { () throws(StoreError) -> ImportCounts in
                let topics = try topicSeqs(creating: batch.rows)
                switch engine {
                case .sqlite: return try importByGroups(batch, topics: topics)
                case .postgres: return try importByArrays(batch, topics: topics)
                }
            }
        }
        // A row repeating an earlier one's token found its endpoint there: every row is counted.
        counts.existing += batch.repeated
        return counts
    }

    /// Runs `body` (a transaction) with SQLite's foreign-key checks off, and on again after it,
    /// whatever happens. Why: a statement that can fail a check part-way (an immediate foreign key,
    /// a CHECK or NOT NULL that aborts) keeps a statement journal, a copy of every page it changes
    /// before it changes it, so that it can be undone alone; for a 100-row insert into random places
    /// of the token index that was ~6 KB of temporary file per row. The import's references hold by
    /// construction: its subscriptions name topics and endpoints written or read in the same
    /// transaction, under SQLite's one write lock. PostgreSQL runs `body` as is.
    private func withoutForeignKeyChecksOnSQLite<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        guard engine == .sqlite else { return try body() }
        try run("PRAGMA foreign_keys = OFF", [])
        let result: Result<T, StoreError>
        do { result = .success(try body()) } catch { result = .failure(error) }
        // Left off, cascading deletes would stop on this connection: a failure here is the import's.
        // Read back, since the pragma does nothing, and says nothing, inside a transaction that a
        // failed rollback left open.
        try run("PRAGMA foreign_keys = ON", [])
        guard try row("PRAGMA foreign_keys", [], { $0.int64(0) }) == 1 else {
            throw StoreError(.internal, message: "foreign-key checks did not come back on after an import batch")
        }
        return try result.get()
    }

    /// The batch's topics by name, created where missing: in name order (two imports at once take
    /// the same rows' locks in the same order on PostgreSQL), and on PostgreSQL in two statements
    /// whatever their number (a round trip each would be two per topic per batch).
    private func topicSeqs(creating rows: [EndpointImport]) throws(StoreError) -> [String: Int64] {
        var names = Set<String>()
        for row in rows { names.formUnion(row.topics) }
        let sorted = names.sorted()
        guard !sorted.isEmpty else { return [:] }
        if engine == .postgres {
            try run(
                "INSERT INTO topics (name) SELECT unnest(?::text[]) ORDER BY 1 ON CONFLICT (name) DO NOTHING",
                [.textArray(sorted)])
            let found = try self.rows(
                "SELECT name, seq FROM topics WHERE name = ANY(?::text[])", [.textArray(sorted)]
            ) { ($0.text(0), $0.int64(1)) }
            let seqs = Dictionary(found, uniquingKeysWith: { first, _ in first })
            guard seqs.count == sorted.count else {
                throw StoreError(.internal, message: "a topic vanished while importing")
            }
            return seqs
        }
        var seqs: [String: Int64] = [:]
        for name in sorted {
            try createTopic(name: name)
            guard let seq = try topicSeq(name: name) else {
                throw StoreError(.internal, message: "topic \(name) vanished while importing")
            }
            seqs[name] = seq
        }
        return seqs
    }

    /// SQLite: no round trips, but a statement's run has a fixed cost, so rows go
    /// ``ImportBatch/sqliteRowsPerStatement`` to a statement: new endpoints a group to an insert (its
    /// RETURNING names those inserted), then the batch's subscriptions the same way. A token
    /// already registered costs a lookup, and an update only when the row changes it.
    private func importByGroups(_ batch: ImportBatch, topics: [String: Int64]) throws(StoreError) -> ImportCounts {
        var counts = ImportCounts()
        var nextSubscriptionID = 0
        // The whole batch's subscriptions go in after its endpoints: gathered per group of endpoints
        // (~133 for 100 rows), each group's last 33 went in a statement apiece.
        var subscriptions: [(id: String, topic: Int64, endpoint: Int64)] = []
        subscriptions.reserveCapacity(batch.subscriptionIDs.count)
        for insert in batch.sqliteInserts {
            let sql = insert.rows.count == 1 ? ImportSQL.endpoints1 : ImportSQL.endpoints
            let inserted = try self.rows(sql, insert.values, capacity: insert.rows.count) { row in
                (key: row.withBytes(0) { TokenKey.Digest($0) }, seq: row.int64(1))
            }
            var insertedSeqs: [TokenKey.Digest: Int64] = [:]
            insertedSeqs.reserveCapacity(inserted.count)
            for (key, seq) in inserted {
                if let key, insertedSeqs[key] == nil { insertedSeqs[key] = seq }
            }
            counts.created += inserted.count
            for index in insert.rows {
                let row = batch.rows[index]
                let seq: Int64
                // A row without its key in the answer (not inserted: its token was there) is looked up.
                if let key = batch.sqliteKeys[index], let new = insertedSeqs[key] {
                    seq = new
                } else {
                    guard let (found, existing) = try endpoint(app: row.app, token: row.token) else {
                        throw try staleTokenKey(app: row.app, token: row.token)
                            ?? StoreError(
                                .internal, message: "endpoint of a conflicting token vanished while importing")
                    }
                    seq = found
                    counts.existing += 1
                    if try update(existing, seq: seq, to: row) { counts.updated += 1 }
                }
                for name in row.topics {
                    let id = batch.subscriptionIDs[nextSubscriptionID]
                    nextSubscriptionID += 1
                    if let topic = topics[name] { subscriptions.append((id, topic, seq)) }
                }
            }
        }
        counts.subscriptionsCreated += try insertSubscriptions(subscriptions)
        return counts
    }

    /// Subscriptions (topic, endpoint) not there yet, ``ImportBatch/sqliteRowsPerStatement`` to a
    /// statement; answers how many were created.
    private func insertSubscriptions(_ pairs: [(id: String, topic: Int64, endpoint: Int64)]) throws(StoreError) -> Int {
        var created = 0
        for range in ImportBatch.sqliteStatementGroups(pairs.count) {
            let group = pairs[range]
            var values: [SQLValue] = []
            values.reserveCapacity(group.count * 3)
            for pair in group { values += [.text(pair.id), .integer(pair.topic), .integer(pair.endpoint)] }
            created += try run(group.count == 1 ? ImportSQL.subscriptions1 : ImportSQL.subscriptions, values)
        }
        return created
    }

    /// Sets what the row gives on an existing endpoint; answers whether anything changed.
    private func update(_ existing: EndpointRecord, seq: Int64, to row: EndpointImport) throws(StoreError) -> Bool {
        var changed = existing
        if let userID = row.userID { changed.userID = userID }
        if let data = row.customUserData { changed.customUserData = data }
        if let enabled = row.enabled, enabled != existing.enabled {
            changed.enabled = enabled
            // Enabled again, or disabled by hand: no provider's reason stands.
            changed.disabledReason = ""
        }
        guard changed != existing else { return false }
        try run(
            "UPDATE endpoints SET user_id = ?, custom_user_data = ?, enabled = ?, disabled_reason = ? WHERE seq = ?",
            [
                .text(changed.userID), .text(changed.customUserData), .bool(changed.enabled),
                .text(changed.disabledReason), .integer(seq),
            ])
        return true
    }

    /// PostgreSQL: a statement per row would be a network round trip per row, so the batch goes as
    /// arrays in three set-based statements: new endpoints, changes to existing ones, subscriptions.
    /// Rows are inserted in the batch's order (`WITH ORDINALITY`), so creation order is input order.
    private func importByArrays(_ batch: ImportBatch, topics: [String: Int64]) throws(StoreError) -> ImportCounts {
        let rows = batch.rows
        var counts = ImportCounts()
        let apps = rows.map(\.app)
        let tokens = rows.map(\.token)
        let userIDs = rows.map { $0.userID ?? "" }
        let data = rows.map { $0.customUserData ?? "" }
        let enabled = rows.map { $0.enabled ?? true ? "1" : "0" }
        counts.created = try run(
            """
            INSERT INTO endpoints (id, app, token, enabled, custom_user_data, created_at, disabled_reason, user_id)
            SELECT i.id, i.app, i.token, i.enabled, i.data, ?, '', i.user_id
            FROM unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::text[], ?::text[]) WITH ORDINALITY
                AS i (id, app, token, enabled, data, user_id, n)
            ORDER BY i.n
            ON CONFLICT (app, md5(token)) DO NOTHING
            """,
            [
                .integer(batch.now), .textArray(batch.endpointIDs), .textArray(apps), .textArray(tokens),
                .textArray(enabled), .textArray(data), .textArray(userIDs),
            ])
        counts.existing = rows.count - counts.created
        // Rows just inserted match too, but change nothing, so they are not updated.
        counts.updated = try run(
            """
            UPDATE endpoints e SET
                user_id = CASE WHEN i.has_user THEN i.user_id ELSE e.user_id END,
                custom_user_data = CASE WHEN i.has_data THEN i.data ELSE e.custom_user_data END,
                enabled = CASE WHEN i.has_enabled THEN i.enabled ELSE e.enabled END,
                disabled_reason = CASE WHEN i.has_enabled AND i.enabled <> e.enabled THEN '' ELSE e.disabled_reason END
            FROM unnest(?::text[], ?::text[], ?::text[], ?::bool[], ?::text[], ?::bool[], ?::int[], ?::bool[])
                AS i (app, token, user_id, has_user, data, has_data, enabled, has_enabled)
            WHERE e.app = i.app AND md5(e.token) = md5(i.token) AND e.token = i.token
                AND ((i.has_user AND e.user_id <> i.user_id) OR (i.has_data AND e.custom_user_data <> i.data)
                    OR (i.has_enabled AND e.enabled <> i.enabled))
            """,
            [
                .textArray(apps), .textArray(tokens), .textArray(userIDs), .textArray(rows.map { flag($0.userID) }),
                .textArray(data), .textArray(rows.map { flag($0.customUserData) }), .textArray(enabled),
                .textArray(rows.map { flag($0.enabled) }),
            ])
        var subscriptionIDs: [String] = []
        var subscriptionApps: [String] = []
        var subscriptionTokens: [String] = []
        var subscriptionTopics: [String] = []
        var nextSubscriptionID = 0
        for row in rows {
            for name in row.topics {
                let id = batch.subscriptionIDs[nextSubscriptionID]
                nextSubscriptionID += 1
                guard let seq = topics[name] else { continue }
                subscriptionIDs.append(id)
                subscriptionApps.append(row.app)
                subscriptionTokens.append(row.token)
                subscriptionTopics.append(String(seq))
            }
        }
        guard !subscriptionTopics.isEmpty else { return counts }
        // The endpoints' copies (`SubscriptionDeliverySchema`) are read under a share lock taken in
        // id order, the order disables take their row locks in, so the two cannot deadlock; then
        // the subscriptions go in in the batch's order.
        counts.subscriptionsCreated = try run(
            """
            WITH copied AS MATERIALIZED (
                SELECT i.id AS subscription_id, i.topic_seq, i.n, e.seq, e.id, e.app, e.token, e.enabled
                FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[])
                    WITH ORDINALITY AS i (id, topic_seq, app, token, n)
                JOIN endpoints e ON e.app = i.app AND md5(e.token) = md5(i.token) AND e.token = i.token
                ORDER BY e.id
                FOR SHARE OF e
            )
            INSERT INTO subscriptions (id, topic_seq, endpoint_seq, filter_policy_json, endpoint_id, endpoint_app,
                endpoint_token, endpoint_enabled)
            SELECT subscription_id, topic_seq, seq, '', id, app, token, enabled FROM copied
            ORDER BY n
            ON CONFLICT (topic_seq, endpoint_seq) DO NOTHING
            """,
            [
                .textArray(subscriptionIDs), .textArray(subscriptionTopics),
                .textArray(subscriptionApps), .textArray(subscriptionTokens),
            ])
        return counts
    }

    private func flag(_ value: (some Any)?) -> String { value == nil ? "0" : "1" }

    /// Endpoints in creation order with the names of their topics (one correlated lookup per
    /// endpoint through the index of subscriptions by endpoint); `app` nil: every app.
    func exportEndpoints(app: String?, cursor: String?, limit: Int) throws(StoreError) -> Page<ExportedEndpoint> {
        try PageCursor.check(limit: limit)
        let after = try PageCursor.decode(cursor, as: .endpoints)
        var filter = SQLConditions("e.seq > ?", .integer(after))
        filter.add("e.app = ?", ifGiven: app)
        // Topic names have no spaces (A-Za-z0-9_-), so a space joins them unambiguously. SQLite 3.40
        // has no ORDER BY inside an aggregate; it concatenates in its ordered subquery's order.
        let subscribed = "subscriptions s JOIN topics t ON t.seq = s.topic_seq WHERE s.endpoint_seq = e.seq"
        let topics =
            engine == .postgres
            ? "(SELECT string_agg(t.name, ' ' ORDER BY s.seq) FROM \(subscribed))"
            : "(SELECT group_concat(name, ' ') FROM (SELECT t.name FROM \(subscribed) ORDER BY s.seq))"
        let fetched = try rows(
            """
            SELECT \(Columns.endpoint), \(topics)
            FROM endpoints e WHERE \(filter.sql) ORDER BY e.seq LIMIT ?
            """,
            filter.values + [.int(limit + 1)]
        ) { row in
            let (seq, record) = Columns.endpoint(row)
            let names = row.text(9)
            return (
                seq: seq,
                exported: ExportedEndpoint(
                    endpoint: record, topics: names.isEmpty ? [] : names.split(separator: " ").map(String.init))
            )
        }
        let page = PageCursor.page(fetched, limit: limit, kind: .endpoints) { $0.seq }
        return Page(items: page.items.map(\.exported), nextCursor: page.nextCursor)
    }
}

/// SQLite's multi-row import statements, made once: built for each group, the ~3 KB texts were
/// a few percent of an import. `OR IGNORE` rather than `ON CONFLICT … DO NOTHING`: the upsert form
/// still aborts on a NOT NULL or CHECK failure, so SQLite keeps a statement journal for it (see
/// `withoutForeignKeyChecksOnSQLite`); rows are validated before they get here, and a row left out
/// is one RETURNING does not name, which `importByGroups` looks up as an existing token. The token's
/// key is bound, made in Swift: a call of an application-defined SQL function in an insert is one
/// more way to fail part-way, and SQLite keeps a statement journal for it too.
private enum ImportSQL {
    static func endpoints(rows: Int) -> String {
        """
        INSERT OR IGNORE INTO endpoints
            (id, app, token, enabled, custom_user_data, created_at, disabled_reason, user_id, token_key)
        VALUES \(Array(repeating: "(?, ?, ?, ?, ?, ?, '', ?, ?)", count: rows).joined(separator: ", "))
        RETURNING token_key, seq
        """
    }

    static func subscriptions(rows: Int) -> String {
        """
        INSERT OR IGNORE INTO subscriptions (id, topic_seq, endpoint_seq, filter_policy_json, filter_policy_scope)
        VALUES \(Array(repeating: "(?, ?, ?, '', '')", count: rows).joined(separator: ", "))
        """
    }

    static let endpoints = endpoints(rows: ImportBatch.sqliteRowsPerStatement)
    static let endpoints1 = endpoints(rows: 1)
    static let subscriptions = subscriptions(rows: ImportBatch.sqliteRowsPerStatement)
    static let subscriptions1 = subscriptions(rows: 1)
}
