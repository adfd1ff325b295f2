import PushPosix
import PushSync

/// Runs a stream of inputs through a callback-based operation (a Send: started on the caller's
/// loop, finished on whichever loop gives its last result), at most `window` at once, and emits the
/// outputs in input order, each as soon as it and those before it are done. No task per input: an
/// input costs its operation and a slot. An input's error (thrown by `start` or given to its
/// completion) ends everything when its turn comes, after the outputs before it; operations still
/// running are then cancelled through what `start` returned.
enum OrderedPipeline {
    typealias Completion<Output> = @Sendable (Result<Output, any Error>) -> Void

    /// - Parameters:
    ///   - start: begins one input's operation, which calls its completion once, from any thread;
    ///     returns how to cancel it. A throw is that input's result.
    ///   - emit: called with each output in order, one at a time.
    static func run<Input: Sendable, Output: Sendable>(
        _ inputs: some AsyncSequence<Input, Never> & Sendable, window: Int,
        start: @escaping @Sendable (Input, @escaping Completion<Output>) throws -> @Sendable () -> Void,
        emit: @escaping @Sendable (Output) async -> Void
    ) async throws {
        let slots = AsyncSlots(window)
        let results = OrderedResults<Output>()
        try await withTaskCancellationHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    defer { results.inputsEnded() }
                    for await input in inputs {
                        try await slots.acquire()
                        let index = results.open()
                        do {
                            let cancel = try start(input) { results.complete(index, $0) }
                            results.setCancel(index, cancel)
                        } catch {
                            results.complete(index, .failure(error))
                        }
                    }
                }
                group.addTask {
                    while let result = try await results.next() {
                        await emit(try result.get())
                        slots.release()
                    }
                }
                do {
                    // Not waitForAll, which waits for every child before it rethrows: the reader may
                    // be waiting for a request the client never sends, so the first error must cancel it.
                    while try await group.next() != nil {}
                } catch {
                    group.cancelAll()
                    results.cancelAll()
                    throw error
                }
            }
        } onCancel: {
            results.cancelAll()
        }
    }
}

/// The results of an ``OrderedPipeline``'s operations, handed out in the order they were opened.
final class OrderedResults<Output: Sendable>: Sendable {
    private enum Slot {
        case running(cancel: (@Sendable () -> Void)?)
        case done(Result<Output, any Error>)
    }

    private struct State {
        var slots: [Int: Slot] = [:]
        var opened = 0
        var nextToHand = 0
        var ended = false
        var cancelled = false
        var waiter: CheckedContinuation<Result<Output, any Error>?, any Error>?
    }

    private enum Handout {
        case wait, cancelled
        case result(Result<Output, any Error>?)
    }

    private let state = Locked(State())

    /// A new operation's index.
    func open() -> Int {
        state.withLock { state in
            state.slots[state.opened] = .running(cancel: nil)
            state.opened += 1
            return state.opened - 1
        }
    }

    /// How to cancel operation `index`; run at once if everything was cancelled meanwhile.
    func setCancel(_ index: Int, _ cancel: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.cancelled { return true }
            if case .running? = state.slots[index] { state.slots[index] = .running(cancel: cancel) }
            return false
        }
        if runNow { cancel() }
    }

    func complete(_ index: Int, _ result: Result<Output, any Error>) {
        let handOff = state.withLock {
            state -> (CheckedContinuation<Result<Output, any Error>?, any Error>, Result<Output, any Error>)? in
            guard case .running? = state.slots[index] else { return nil }
            if index == state.nextToHand, let waiter = state.waiter {
                state.waiter = nil
                state.slots[index] = nil
                state.nextToHand += 1
                return (waiter, result)
            }
            state.slots[index] = .done(result)
            return nil
        }
        if let (waiter, result) = handOff { waiter.resume(returning: result) }
    }

    /// No more operations will be opened.
    func inputsEnded() {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Output, any Error>?, any Error>? in
            state.ended = true
            guard state.nextToHand == state.opened else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next result in order once it is there; nil when every operation's result was handed out
    /// and no more will come. Throws `CancellationError` once cancelled.
    func next() async throws -> Result<Output, any Error>? {
        try await withCheckedThrowingContinuation { continuation in
            let now = state.withLock { state -> Handout in
                if state.cancelled { return .cancelled }
                if case .done(let result)? = state.slots[state.nextToHand] {
                    state.slots[state.nextToHand] = nil
                    state.nextToHand += 1
                    return .result(result)
                }
                if state.ended && state.nextToHand == state.opened { return .result(nil) }
                state.waiter = continuation
                return .wait
            }
            switch now {
            case .wait: break
            case .cancelled: continuation.resume(throwing: CancellationError())
            case .result(let result): continuation.resume(returning: result)
            }
        }
    }

    /// Cancels every operation still running and ends ``next()``.
    func cancelAll() {
        let (cancels, waiter) = state.withLock {
            state -> ([@Sendable () -> Void], CheckedContinuation<Result<Output, any Error>?, any Error>?) in
            guard !state.cancelled else { return ([], nil) }
            state.cancelled = true
            let cancels = state.slots.values.compactMap { slot -> (@Sendable () -> Void)? in
                if case .running(let cancel) = slot { return cancel }
                return nil
            }
            defer { state.waiter = nil }
            return (cancels, state.waiter)
        }
        for cancel in cancels { cancel() }
        waiter?.resume(throwing: CancellationError())
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
