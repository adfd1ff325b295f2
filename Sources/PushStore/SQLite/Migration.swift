/// One step of the schema's history. Steps are never edited once released: a change is a new step,
/// so every file, however old, reaches the same schema by replaying the steps it lacks.
struct Migration {
    /// The `PRAGMA user_version` the file has after this step.
    let version: Int32
    /// What the step does, for error messages.
    let name: String
    /// The step's work, run inside the step's transaction.
    let apply: (Database) throws(StoreError) -> Void
    /// The step drops and re-creates a table others refer to (SQLite's way to change a CHECK):
    /// foreign keys are off while it runs, or dropping the old table would cascade to the rows
    /// that refer to it; `PRAGMA foreign_key_check` must find nothing before it commits.
    let rebuildsTables: Bool

    /// A step made of SQL text only.
    init(version: Int32, name: String, sql: String) {
        self.init(version: version, name: name) { (database: Database) throws(StoreError) in
            try database.execute(sql)
        }
    }

    /// A step that needs code (e.g. to rewrite data).
    init(
        version: Int32, name: String, rebuildsTables: Bool = false,
        apply: @escaping (Database) throws(StoreError) -> Void
    ) {
        self.version = version
        self.name = name
        self.rebuildsTables = rebuildsTables
        self.apply = apply
    }
}

/// Brings a file's schema up to date using `PRAGMA user_version` as the applied step.
enum Migrator {
    /// Applies the steps after the file's version, each in its own transaction with the version bump,
    /// so a failed step leaves the file at the previous version. Answers the versions applied.
    /// A file newer than the last known step is refused: this build cannot know what it holds.
    @discardableResult
    static func migrate(_ database: Database, steps: [Migration] = Schema.migrations) throws(StoreError) -> [Int32] {
        let known = steps.last?.version ?? 0
        let current = try userVersion(database)
        guard current <= known else {
            throw StoreError(
                .incompatible,
                message: "\(database.path) has schema version \(current), newer than this build's \(known); "
                    + "use a newer Pushgate or a different file")
        }
        var applied: [Int32] = []
        for step in steps where step.version > current {
            // Outside the transaction: SQLite ignores this pragma inside one.
            if step.rebuildsTables { try database.execute("PRAGMA foreign_keys = OFF") }
            defer { if step.rebuildsTables { try? database.execute("PRAGMA foreign_keys = ON") } }
            do {
                try database.transaction { () throws(StoreError) in
                    try step.apply(database)
                    if step.rebuildsTables,
                        let broken = try database.row("PRAGMA foreign_key_check", [], { $0.text(0) })
                    {
                        throw StoreError(.internal, message: "the rebuild left rows of \(broken) without their parent")
                    }
                    // Inside the transaction: the version moves only if the step commits.
                    try database.execute("PRAGMA user_version = \(step.version)")
                }
            } catch {
                throw StoreError(
                    error.code, message: "migration \(step.version) (\(step.name)) failed: \(error.message)")
            }
            applied.append(step.version)
        }
        return applied
    }

    /// The file's `PRAGMA user_version` (0 for a new file).
    static func userVersion(_ database: Database) throws(StoreError) -> Int32 {
        let version = try database.row("PRAGMA user_version") { statement in statement.int64(0) }
        return Int32(truncatingIfNeeded: version ?? 0)
    }
}
