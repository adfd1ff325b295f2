import PushCore
import PushPosix
import PushTestSupport
import Testing

@testable import PushDelivery

/// Where an app's connections are made: a small send on a loop without one makes it there, so a
/// gRPC handler's request and answer stay on its thread.
@Suite("Provider connection placement", .timeLimit(.minutes(1)))
struct ConnectionPlacementTests {
    @Test("a small send on a loop makes the next connection on that loop; a large one spreads the rest")
    func placement() async throws {
        let fixture = try FakeProviderFixture(client: { $0.connections = 3 })
        defer { fixture.stop() }
        let loops = fixture.group.loops
        #expect(fixture.client.connectionLoops.isEmpty)

        // From the second loop: the first connection is made there.
        let first = await Task(executorPreference: loops[1]) {
            await fixture.send(tokens: [String(repeating: "a", count: 64)])
        }.value
        #expect(first.map(\.status) == [.delivered])
        #expect(fixture.client.connectionLoops.map(\.name) == [loops[1].name])

        // Again from the second loop: the same connection, nothing new.
        _ = await Task(executorPreference: loops[1]) {
            await fixture.send(tokens: [String(repeating: "b", count: 64)])
        }.value
        #expect(fixture.client.connectionLoops.count == 1)

        // From the first loop: the next connection is made there.
        _ = await Task(executorPreference: loops[0]) {
            await fixture.send(tokens: [String(repeating: "c", count: 64)])
        }.value
        #expect(fixture.client.connectionLoops.map(\.name) == [loops[1].name, loops[0].name])

        // A send larger than the local limit uses every connection: the third is made on some loop.
        let results = await fixture.send(tokens: TestTokens.hex64(count: 100))
        #expect(results.allSatisfy { $0.status == .delivered })
        #expect(fixture.client.connectionLoops.count == 3)
    }
}
