import Glibc
import PushPosix
import PushSync
import PushTestSupport
import Testing

@testable import PushStore

@Suite("Store health")
struct StoreHealthTests {
    final class Changes: Sendable {
        let seen = Locked([String]())
        func add(_ change: StoreHealth.Change) {
            let text =
                switch change {
                case .failed(let error, let first): "failed(\(error.code), first: \(first))"
                case .recovered: "recovered"
                }
            seen.withLock { $0.append(text) }
        }
    }

    @Test("a store failure starts failing, a request's own fault does not, a success recovers")
    func transitions() {
        let health = StoreHealth()
        let changes = Changes()
        health.onChange { changes.add($0) }
        health.record(nil)
        health.record(StoreError(.notFound, message: "no such endpoint"))
        #expect(!health.isFailing)
        health.record(StoreError(.io, message: "disk full"))
        health.record(StoreError(.io, message: "disk full"))
        #expect(health.isFailing)
        health.record(nil)
        health.record(nil)
        #expect(!health.isFailing)
        #expect(changes.seen.withLock { $0 } == ["failed(io, first: true)", "failed(io, first: false)", "recovered"])
    }

    @Test("a SQLite file deleted under the running store fails every call instead of writing into it")
    func deletedFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await SQLiteStore.open(path: directory.databasePath)
        _ = try await store.createTopic(name: "before")
        for suffix in ["", "-wal", "-shm"] { unlink(directory.databasePath + suffix) }
        await #expect(throws: StoreError.self) { _ = try await store.createTopic(name: "after") }
        do {
            _ = try await store.createTopic(name: "after")
        } catch {
            #expect(error.code == .io)
            #expect(error.message.contains("was deleted while Pushgate had it open"))
        }
        #expect(store.health.isFailing)
        await store.close()
    }
}
