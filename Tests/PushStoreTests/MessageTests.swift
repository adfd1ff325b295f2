import PushStore
import Testing

@Suite("Messages and fan-out progress")
struct MessageTests {
    private func topicMessage(_ id: String, at time: Int64 = 100) -> MessageRecord {
        MessageRecord(
            id: id, topic: "news", message: #"{"default":"hi"}"#, messageStructure: "json",
            attributes: ["AWS.SNS.MOBILE.APNS.PUSH_TYPE": "alert", "kind": "breaking"], publishedAt: time)
    }

    @Test("a message reads back as inserted, attributes included")
    func roundTrip() async throws {
        try await withStore { store, _ in
            let m = topicMessage("m1")
            try await store.insertMessage(m)
            #expect(try await store.message(id: "m1") == m)
            let direct = MessageRecord(id: "m2", endpointID: "e1", message: "plain", publishedAt: 5)
            try await store.insertMessage(direct)
            #expect(try await store.message(id: "m2") == direct)
            #expect(
                await storeError { () async throws(StoreError) in try await store.message(id: "m3") }?.code == .notFound
            )
        }
    }

    @Test("a duplicate id is alreadyExists; a message needs exactly one target")
    func insertErrors() async throws {
        try await withStore { store, _ in
            try await store.insertMessage(topicMessage("m1"))
            let duplicate = await storeError { () async throws(StoreError) in
                try await store.insertMessage(topicMessage("m1"))
            }
            #expect(duplicate?.code == .alreadyExists)
            #expect(duplicate?.existingID == "m1")
            let both = MessageRecord(id: "m2", topic: "t", endpointID: "e", message: "x", publishedAt: 1)
            let neither = MessageRecord(id: "m3", message: "x", publishedAt: 1)
            for bad in [both, neither] {
                let error = await storeError { () async throws(StoreError) in try await store.insertMessage(bad) }
                #expect(error?.code == .invalidArgument)
            }
        }
    }

    @Test("progress accumulates chunk by chunk, and a finished message takes no more")
    func progress() async throws {
        try await withStore { store, _ in
            try await store.insertMessage(topicMessage("m1"))
            try await store.recordProgress(
                messageID: "m1", cursor: "fo.a", delivered: 5, rejected: 1, failed: 0, skipped: 2, total: 8,
                state: .fanningOut)
            try await store.recordProgress(
                messageID: "m1", cursor: "fo.k", delivered: 3, rejected: 0, failed: 1, skipped: 0, total: 4,
                state: .completed)
            let m = try await store.message(id: "m1")
            #expect(m.state == .completed && m.cursor == "fo.k")
            #expect([m.total, m.delivered, m.rejected, m.failed, m.skipped] == [12, 8, 1, 1, 2])

            let late = await storeError { () async throws(StoreError) in
                try await store.recordProgress(
                    messageID: "m1", cursor: "fo.z", delivered: 1, rejected: 0, failed: 0, skipped: 0, total: 1,
                    state: .completed)
            }
            #expect(late?.code == .conflict)
            #expect(try await store.message(id: "m1") == m)

            let missing = await storeError { () async throws(StoreError) in
                try await store.recordProgress(
                    messageID: "nope", cursor: "", delivered: 0, rejected: 0, failed: 0, skipped: 0, total: 0,
                    state: .fanningOut)
            }
            #expect(missing?.code == .notFound)
            try await store.insertMessage(topicMessage("m2"))
            let negative = await storeError { () async throws(StoreError) in
                try await store.recordProgress(
                    messageID: "m2", cursor: "", delivered: -1, rejected: 0, failed: 0, skipped: 0, total: 0,
                    state: .fanningOut)
            }
            #expect(negative?.code == .invalidArgument)
        }
    }

    @Test("progress and unfinished messages survive closing and reopening the file")
    func durableAcrossRestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let store = try await SQLiteStore.open(path: directory.databasePath)
            try await store.insertMessage(topicMessage("done", at: 1))
            try await store.insertMessage(topicMessage("running", at: 2))
            try await store.insertMessage(topicMessage("waiting", at: 3))
            try await store.insertMessage(topicMessage("late", at: 4))
            try await store.recordProgress(
                messageID: "done", cursor: "fo.1", delivered: 1, rejected: 0, failed: 0, skipped: 0, total: 1,
                state: .completed)
            try await store.recordProgress(
                messageID: "running", cursor: "fo.3", delivered: 2, rejected: 1, failed: 0, skipped: 0, total: 3,
                state: .fanningOut)
            try await store.recordProgress(
                messageID: "running", cursor: "fo.6", delivered: 3, rejected: 0, failed: 0, skipped: 0, total: 3,
                state: .fanningOut)
            try await store.recordProgress(
                messageID: "late", cursor: "fo.2", delivered: 0, rejected: 0, failed: 0, skipped: 9, total: 9,
                state: .expired)
            await store.close()
            let closed = await storeError { () async throws(StoreError) in try await store.message(id: "done") }
            #expect(closed?.code == .internal)
        }
        let reopened = try await SQLiteStore.open(path: directory.databasePath)
        let running = try await reopened.message(id: "running")
        #expect(running.state == .fanningOut && running.cursor == "fo.6")
        #expect([running.total, running.delivered, running.rejected] == [6, 5, 1])
        #expect(running.attributes["kind"] == "breaking")
        let unfinished = try await reopened.unfinishedMessages()
        #expect(unfinished.map(\.id) == ["running", "waiting"])
        #expect(unfinished[1] == topicMessage("waiting", at: 3))
        await reopened.close()
    }
}
