import PushPosix
import PushSync

/// Processes a stream of inputs concurrently (at most `window` at once) and emits the outputs in
/// input order, each as soon as it and those before it are done. The first error ends everything.
enum OrderedPipeline {
    static func run<Input: Sendable, Output: Sendable>(
        _ inputs: some AsyncSequence<Input, Never> & Sendable, window: Int,
        process: @escaping @Sendable (Input) async throws -> Output,
        emit: @escaping @Sendable (Output) async -> Void
    ) async throws {
        let slots = AsyncSlots(window)
        let (ordered, queue) = AsyncStream.makeStream(of: Task<Output, any Error>.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { queue.finish() }
                for await input in inputs {
                    try await slots.acquire()
                    queue.yield(Task { try await process(input) })
                }
            }
            group.addTask {
                for await task in ordered {
                    let output = try await withTaskCancellationHandler {
                        try await task.value
                    } onCancel: {
                        task.cancel()
                    }
                    await emit(output)
                    slots.release()
                }
            }
            do {
                // Not waitForAll, which waits for every child before it rethrows: the reader may
                // be waiting for a request the client never sends, so the first error must cancel it.
                while try await group.next() != nil {}
            } catch {
                group.cancelAll()
                throw error
            }
        }
    }
}

/// A counting semaphore for tasks: `acquire` waits while all slots are taken.
final class AsyncSlots: Sendable {
    private struct State {
        var free: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    init(_ count: Int) { state = Locked(State(free: count)) }

    func acquire() async throws {
        try Task.checkCancellation()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
        try Task.checkCancellation()
    }

    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume()
    }
}
