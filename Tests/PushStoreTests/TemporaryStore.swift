import Glibc
import PushStore

/// A fresh directory under /tmp for one test's database file, removed afterwards.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/pushstore-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw TestSetupError(message: "mkdtemp failed: errno \(errno)") }
        path = String(cString: made)
    }

    /// The database file's path inside the directory.
    var databasePath: String { path + "/store.sqlite" }

    /// Removes the database file, its WAL companions and the directory.
    func remove() {
        for suffix in ["", "-wal", "-shm", "-journal"] { unlink(databasePath + suffix) }
        rmdir(path)
    }
}

struct TestSetupError: Error { let message: String }

/// Runs `body` with a store on a new file in a fresh directory; closes and removes it afterwards.
func withStore(_ body: (SQLiteStore, TemporaryDirectory) async throws -> Void) async throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = try await SQLiteStore.open(path: directory.databasePath)
    do {
        try await body(store, directory)
    } catch {
        await store.close()
        throw error
    }
    await store.close()
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
