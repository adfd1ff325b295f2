import Dispatch
import PushSync
import Testing

@testable import PushGateway

@Suite("OrderedPipeline")
struct OrderedPipelineTests {
    struct Refused: Error {}

    /// Completes `n`'s operation with `n * 10` from another thread after `delay` milliseconds.
    static func later(_ n: Int, after delay: Int, _ completion: @escaping OrderedPipeline.Completion<Int>) {
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) { completion(.success(n * 10)) }
    }

    @Test("outputs come in input order although they finish out of order, at most `window` at once")
    func order() async throws {
        let (inputs, feed) = AsyncStream.makeStream(of: Int.self)
        for n in 0..<20 { feed.yield(n) }
        feed.finish()
        let outputs = Collected()
        let running = Locked((now: 0, most: 0))
        try await OrderedPipeline.run(
            inputs, window: 4,
            start: { n, completion in
                running.withLock {
                    $0.now += 1
                    $0.most = max($0.most, $0.now)
                }
                Self.later(n, after: 20 - n) { result in
                    running.withLock { $0.now -= 1 }
                    completion(result)
                }
                return {}
            },
            emit: { outputs.append($0) })
        #expect(outputs.values == (0..<20).map { $0 * 10 })
        #expect(running.withLock { $0.most } <= 4)
    }

    @Test("an operation that completes inside start, and a start that throws, keep their places")
    func synchronous() async throws {
        let (inputs, feed) = AsyncStream.makeStream(of: Int.self)
        for n in 0..<3 { feed.yield(n) }
        feed.finish()
        let outputs = Collected()
        await #expect(throws: Refused.self) {
            try await OrderedPipeline.run(
                inputs, window: 2,
                start: { n, completion in
                    if n == 2 { throw Refused() }
                    if n == 1 { completion(.success(10)) } else { Self.later(n, after: 30, completion) }
                    return {}
                },
                emit: { outputs.append($0) })
        }
        #expect(outputs.values == [0, 10], "the outputs before the failed input are emitted, in order")
    }

    @Test(
        "an error ends the run when its turn comes, while the input is still open, cancelling what still runs",
        .timeLimit(.minutes(1)))
    func errorWhileInputOpen() async {
        // The input never finishes, as a client that keeps its stream open: the error must not
        // wait for it (it did when the group waited for every child before rethrowing).
        let (inputs, feed) = AsyncStream.makeStream(of: Int.self)
        for n in 1...3 { feed.yield(n) }
        let cancelled = Locked<[Int]>([])
        let outputs = Collected()
        await #expect(throws: Refused.self) {
            try await OrderedPipeline.run(
                inputs, window: 4,
                start: { (n: Int, completion: @escaping OrderedPipeline.Completion<Int>) in
                    switch n {
                    case 1: Self.later(1, after: 30, completion)
                    case 2: completion(.failure(Refused()))
                    default: break  // 3 never completes by itself (a Send whose provider does not answer)
                    }
                    return { cancelled.withLock { $0.append(n) } }
                },
                emit: { outputs.append($0) })
        }
        #expect(outputs.values == [10], "what came before the error is emitted first")
        #expect(cancelled.withLock { $0 } == [3], "only the operation still running is cancelled")
        feed.finish()
    }

    @Test("cancelling the task cancels every running operation", .timeLimit(.minutes(1)))
    func taskCancellation() async throws {
        let (inputs, feed) = AsyncStream.makeStream(of: Int.self)
        for n in 0..<3 { feed.yield(n) }
        let cancelled = Locked(0)
        let started = Locked(0)
        let run = Task {
            try await OrderedPipeline.run(
                inputs, window: 4,
                start: { (_: Int, _: @escaping OrderedPipeline.Completion<Int>) in
                    started.withLock { $0 += 1 }
                    return { cancelled.withLock { $0 += 1 } }
                },
                emit: { _ in })
        }
        while started.withLock({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(5)) }
        run.cancel()
        await #expect(throws: CancellationError.self) { try await run.value }
        #expect(cancelled.withLock { $0 } == 3)
        feed.finish()
    }

    final class Collected: @unchecked Sendable {
        private let lock = Locked([Int]())
        var values: [Int] { lock.withLock { $0 } }
        func append(_ value: Int) { lock.withLock { $0.append(value) } }
    }
}
