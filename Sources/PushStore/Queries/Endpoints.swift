/// Endpoint queries; see `Store` for the semantics. Written to stay right when several processes
/// share one PostgreSQL database: inserts settle races with `ON CONFLICT`, not a prior check alone.
extension SQLDatabase {
    func endpoint(app: String, token: String) throws(StoreError) -> (seq: Int64, record: EndpointRecord)? {
        try row(
            "SELECT \(Columns.endpoint) FROM endpoints e WHERE \(engine.tokenMatch)", [.text(app), .text(token)]
        ) {
            Columns.endpoint($0)
        }
    }

    func endpoint(id: String) throws(StoreError) -> (seq: Int64, record: EndpointRecord) {
        let found = try row("SELECT \(Columns.endpoint) FROM endpoints e WHERE e.id = ?", [.text(id)]) {
            Columns.endpoint($0)
        }
        guard let found else { throw StoreError(.notFound, message: "endpoint \(id) does not exist") }
        return found
    }

    func createEndpoint(
        app: String, token: String, customUserData: String, userID: String, enabled: Bool?, now: Int64
    ) throws(StoreError) -> (endpoint: EndpointRecord, created: Bool) {
        if let (seq, existing) = try endpoint(app: app, token: token) {
            return try adopt(existing, seq: seq, customUserData: customUserData, userID: userID, enabled: enabled)
        }
        let record = EndpointRecord(
            id: RandomID.make(), app: app, token: token, enabled: enabled ?? true, customUserData: customUserData,
            createdAt: now, disabledReason: "", userID: userID)
        // Another instance may have registered the token since the lookup: then nothing is inserted
        // and its endpoint answers, as if it had been there first.
        if try insertEndpoint(record, ifAbsent: true) == 1 { return (record, true) }
        guard let (seq, existing) = try endpoint(app: app, token: token) else {
            throw try staleTokenKey(app: app, token: token)
                ?? StoreError(.conflict, message: "endpoint for this token was created and deleted concurrently; retry")
        }
        return try adopt(existing, seq: seq, customUserData: customUserData, userID: userID, enabled: enabled)
    }

    /// The existing endpoint answers a create (SNS idempotency), moved to `userID` if one is given
    /// and differs: a device that changes hands is registered again with its new user.
    private func adopt(
        _ existing: EndpointRecord, seq: Int64, customUserData: String, userID: String, enabled: Bool?
    ) throws(StoreError) -> (endpoint: EndpointRecord, created: Bool) {
        var answer = try Self.sameEndpoint(existing, customUserData: customUserData, enabled: enabled)
        if !userID.isEmpty, userID != existing.userID {
            try run("UPDATE endpoints SET user_id = ? WHERE seq = ?", [.text(userID), .integer(seq)])
            answer.endpoint.userID = userID
        }
        return answer
    }

    /// SNS idempotency: the same token and data answer the existing endpoint; other data (or
    /// another `enabled`, when one is asked for) is refused.
    private static func sameEndpoint(_ existing: EndpointRecord, customUserData: String, enabled: Bool?)
        throws(StoreError) -> (endpoint: EndpointRecord, created: Bool)
    {
        if let enabled, enabled != existing.enabled {
            throw StoreError(
                .alreadyExists, existingID: existing.id,
                message:
                    "endpoint \(existing.id) already exists with the same token, but enabled is \(existing.enabled)")
        }
        guard existing.customUserData == customUserData else {
            throw StoreError(
                .alreadyExists, existingID: existing.id,
                message: "endpoint \(existing.id) already exists with the same token, but different custom_user_data")
        }
        return (existing, false)
    }

    /// On SQLite, the error for an insert refused by the token's unique key although no endpoint has
    /// the token: a row whose `token_key` is not its app's and token's (changed by hand; see
    /// docs/import.md) holds it. `nil` when there is none (PostgreSQL: never).
    func staleTokenKey(app: String, token: String) throws(StoreError) -> StoreError? {
        guard engine == .sqlite else { return nil }
        let holder = try row(
            "SELECT id FROM endpoints WHERE token_key = \(TokenKey.sqlFunction)(?, ?)", [.text(app), .text(token)]
        ) { $0.text(0) }
        return holder.map { id in
            StoreError(
                .internal,
                message: "endpoint \(id) holds the token key of this app and token but not their values "
                    + "(changed outside Pushgate?): set its token_key to \(TokenKey.sqlFunction)(app, token)")
        }
    }

    /// Inserts a new endpoint; `ifAbsent` skips one whose (app, token) is taken. Answers rows inserted.
    @discardableResult
    func insertEndpoint(_ record: EndpointRecord, ifAbsent: Bool = false) throws(StoreError) -> Int {
        let key = engine.tokenKeyInsert(app: "?2", token: "?3")
        return try run(
            """
            INSERT INTO endpoints (id, app, token, enabled, custom_user_data, created_at, disabled_reason, user_id\(key.column))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8\(key.value))\(ifAbsent ? " ON CONFLICT \(engine.tokenConflict) DO NOTHING" : "")
            """,
            [
                .text(record.id), .text(record.app), .text(record.token), .bool(record.enabled),
                .text(record.customUserData), .integer(record.createdAt), .text(record.disabledReason),
                .text(record.userID),
            ])
    }

    func updateEndpoint(id: String, token: String?, enabled: Bool?, customUserData: String?, userID: String?)
        throws(StoreError) -> EndpointRecord
    {
        try transaction { () throws(StoreError) -> EndpointRecord in
            let (seq, current) = try endpoint(id: id)
            if let token, token != current.token, let (_, other) = try endpoint(app: current.app, token: token) {
                throw StoreError(
                    .alreadyExists, existingID: other.id,
                    message: "endpoint \(other.id) already exists with the same token")
            }
            // Enabling clears the reason; disabling by hand leaves it ("" unless already disabled).
            try run(
                """
                UPDATE endpoints SET
                    \(engine.tokenKeyUpdate(token: "?2"))token = coalesce(?2, token),
                    custom_user_data = coalesce(?3, custom_user_data),
                    enabled = coalesce(?4, enabled),
                    disabled_reason = CASE WHEN ?4 = 1 THEN '' ELSE disabled_reason END,
                    user_id = coalesce(?5, user_id)
                WHERE seq = ?1
                """,
                [
                    .integer(seq), .text(token), .text(customUserData), enabled.map(SQLValue.bool) ?? .null,
                    .text(userID),
                ])
            return try endpoint(id: id).record
        }
    }

    /// Disables one endpoint; answers whether it exists.
    func disableEndpoint(id: String, reason: String) throws(StoreError) -> Bool {
        try run("UPDATE endpoints SET enabled = 0, disabled_reason = ? WHERE id = ?", [.text(reason), .text(id)]) > 0
    }

    /// Disables a batch in one transaction: one commit for the lot. Unknown ids are skipped. Rows
    /// are locked in id order, so two instances disabling overlapping batches cannot deadlock.
    func disableEndpoints(_ endpoints: [(id: String, reason: String)]) throws(StoreError) {
        let ordered = endpoints.sorted { $0.id < $1.id }
        try transaction { () throws(StoreError) in
            for (id, reason) in ordered { _ = try disableEndpoint(id: id, reason: reason) }
        }
    }

    func deleteEndpoint(id: String) throws(StoreError) {
        // Subscriptions go by ON DELETE CASCADE.
        try run("DELETE FROM endpoints WHERE id = ?", [.text(id)])
    }

    /// Endpoints in creation order, optionally only one app's and/or one user's (the user's through
    /// its index, then filtered by app), or the one with `token` in `app` (the token's unique index).
    func listEndpoints(
        app: String?, userID: String?, token: String?, apps: [String]?, cursor: String?, limit: Int
    ) throws(StoreError) -> Page<EndpointRecord> {
        try PageCursor.check(limit: limit)
        let after = try PageCursor.decode(cursor, as: .endpoints)
        var filter = SQLConditions("e.seq > ?", .integer(after))
        // The partial index's predicate repeated, so it is used (see RecipientRows).
        filter.add("e.user_id = ? AND e.user_id <> ''", ifGiven: userID)
        filter.add("e.app = ?", ifGiven: app)
        filter.add("e.app", in: apps)
        if let token {
            // The unique index is on the token's MD5 (PostgreSQL) or on a key of the app and token
            // (SQLite, `TokenKey`): said so, it is used; without the app SQLite can only filter.
            if engine == .postgres {
                filter.add("md5(e.token) = md5(?) AND e.token = ?", values: [.text(token), .text(token)])
            } else if let app {
                filter.add(
                    "e.token_key = \(TokenKey.sqlFunction)(?, ?) AND e.token = ?",
                    values: [.text(app), .text(token), .text(token)])
            } else {
                filter.add("e.token = ?", ifGiven: token)
            }
        }
        let fetched = try rows(
            "SELECT \(Columns.endpoint) FROM endpoints e WHERE \(filter.sql) ORDER BY e.seq LIMIT ?",
            filter.values + [.int(limit + 1)]
        ) { Columns.endpoint($0) }
        let page = PageCursor.page(fetched, limit: limit, kind: .endpoints) { $0.seq }
        return Page(items: page.items.map(\.record), nextCursor: page.nextCursor)
    }

    /// Whether the user has an endpoint (enabled or not) in one of `apps` (empty: any app).
    func hasEndpoints(userID: String, apps: [String]) throws(StoreError) -> Bool {
        let range = RecipientRows(.user(userID, apps: apps))
        return try row("SELECT 1 FROM \(range.from) WHERE \(range.condition) LIMIT 1", range.values) { _ in true }
            ?? false
    }
}
