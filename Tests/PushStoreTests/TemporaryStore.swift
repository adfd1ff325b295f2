import Glibc
import PushTestSupport
import Testing

@testable import PushStore

extension TemporaryDirectory {
    /// The database file's path inside the directory.
    var databasePath: String { path(of: "store.sqlite") }
}

/// The engines the store suite runs on: SQLite always; PostgreSQL when `PUSHGATE_TEST_PG_URL` names a
/// server (`make unit` and `make test` start a private one with scripts/pg-test-server.sh).
enum StoreEngine: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgres

    var testDescription: String { rawValue }

    /// The server the PostgreSQL variants use, if any.
    static let postgresURL: String? = {
        guard let value = getenv("PUSHGATE_TEST_PG_URL") else { return nil }
        let url = String(cString: value)
        return url.isEmpty ? nil : url
    }()

    static var available: [StoreEngine] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }
}

/// Where one test's data lives: a temporary SQLite file, or a fresh schema in the test server's
/// database (cheap to make and drop; the store's connections find it through `search_path`).
/// Reopening gives a new store on the same data, as a restart would.
final class TestLocation: Sendable {
    let engine: StoreEngine
    private let directory: TemporaryDirectory?
    private let schema: String?

    init(_ engine: StoreEngine) async throws {
        self.engine = engine
        switch engine {
        case .sqlite:
            directory = try TemporaryDirectory()
            schema = nil
        case .postgres:
            directory = nil
            let name = "t_" + RandomID.make()
            schema = name
            try await Self.admin { try $0.execute("CREATE SCHEMA \(name)") }
        }
    }

    /// The `store` setting that opens this location.
    var storeSetting: String {
        if let directory { return directory.databasePath }
        let base = StoreEngine.postgresURL ?? ""
        return base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema ?? "")"
    }

    func open() async throws -> any Store {
        switch engine {
        case .sqlite: try await SQLiteStore.open(path: storeSetting)
        case .postgres: try await PostgresStore.open(url: storeSetting, connections: 3)
        }
    }

    func remove() async {
        directory?.remove()
        if let schema { try? await Self.admin { try $0.execute("DROP SCHEMA \(schema) CASCADE") } }
    }

    /// Runs `body` on a connection of its own to the test server's database.
    static func admin(_ body: @escaping @Sendable (PostgresConnection) throws -> Void) async throws {
        guard let url = StoreEngine.postgresURL else {
            throw TestSetupError("PUSHGATE_TEST_PG_URL is not set")
        }
        let connection = try PostgresConnection(url: url, displayURL: url)
        try body(connection)
    }
}

/// Runs `body` with a new, empty store of `engine`; closes and removes it afterwards.
func withStore(_ engine: StoreEngine, _ body: (any Store) async throws -> Void) async throws {
    try await withLocation(engine) { location in
        let store = try await location.open()
        do {
            try await body(store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }
}

/// Runs `body` with an empty location of `engine` (for tests that open, close and reopen stores).
func withLocation(_ engine: StoreEngine, _ body: (TestLocation) async throws -> Void) async throws {
    let location = try await TestLocation(engine)
    do {
        try await body(location)
    } catch {
        await location.remove()
        throw error
    }
    await location.remove()
}

/// The error a throwing store call ends with, or nil if it succeeds.
func storeError<T>(_ call: () async throws(StoreError) -> T) async -> StoreError? {
    do {
        _ = try await call()
        return nil
    } catch {
        return error
    }
}

@Suite("Store engines")
struct StoreEngineTests {
    @Test(
        "the PostgreSQL variants of the store suite run",
        .disabled(
            if: StoreEngine.postgresURL == nil,
            "PUSHGATE_TEST_PG_URL is not set, so only SQLite was tested: run `make unit` (it starts a private PostgreSQL with scripts/pg-test-server.sh) or set it to a server you may create schemas on"
        ))
    func postgresIsTested() async throws {
        #expect(StoreEngine.available.contains(.postgres))
        try await withStore(.postgres) { store in #expect(store is PostgresStore) }
    }
}
