import Testing

@testable import PushStore

@Suite("Page cursors")
struct PageCursorTests {
    @Test("page cursors decode only their own canonical form")
    func cursors() throws {
        let encoded = PageCursor.encode(.endpoints, after: 123_456)
        #expect(try PageCursor.decode(encoded, as: .endpoints) == 123_456)
        #expect(try PageCursor.decode(nil, as: .endpoints) == 0)
        #expect(try PageCursor.decode("", as: .topics) == 0)
        for bad in ["tp" + encoded.dropFirst(2), "ep.00a", "ep.A", "ep.+1", "ep. 1", "ep"] {
            #expect(throws: StoreError.self, "\(bad)") { try PageCursor.decode(bad, as: .endpoints) }
        }
    }
}
