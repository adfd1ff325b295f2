import PushPosix
import PushSync
import Testing

@testable import PushGateway

@Suite("OrderedPipeline")
struct OrderedPipelineTests {
    struct Refused: Error {}

    @Test("outputs come in input order although they finish out of order")
    func order() async throws {
        let (inputs, feed) = AsyncStream.makeStream(of: Int.self)
        for n in 0..<20 { feed.yield(n) }
        feed.finish()
        let outputs = Collected()
        try await OrderedPipeline.run(
            inputs, window: 4,
            process: { n in
                try await Task.sleep(for: .milliseconds(20 - n))
                return n * 10
            },
            emit: { outputs.append($0) })
        #expect(outputs.values == (0..<20).map { $0 * 10 })
    }

    @Test("the first error ends the run while the input is still open", .timeLimit(.minutes(1)))
    func errorWhileInputOpen() async {
        // The input never finishes, as a client that keeps its stream open: the error must not
        // wait for it (it did when the group waited for every child before rethrowing).
        let (inputs, feed) = AsyncStream.makeStream(of: Int.self)
        feed.yield(1)
        feed.yield(2)
        await #expect(throws: Refused.self) {
            try await OrderedPipeline.run(
                inputs, window: 4,
                process: { n in
                    if n == 2 { throw Refused() }
                    return n
                },
                emit: { _ in })
        }
        feed.finish()
    }

    final class Collected: @unchecked Sendable {
        private let lock = Locked([Int]())
        var values: [Int] { lock.withLock { $0 } }
        func append(_ value: Int) { lock.withLock { $0.append(value) } }
    }
}
