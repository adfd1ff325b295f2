import PushCore
import PushPosix

/// Gathers the results of one Send (one per token, in request order) from whichever loops deliver
/// them, and hands them over once all are in, or at the deadline with the rest FAILED.
///
/// Thread-safe: results arrive from the loops of the app's connections.
public final class DeliveryCollector: Sendable {
    private struct State {
        var results: [DeliveryResult]
        var filled: [Bool]
        var remaining: Int
        var finished = false
        var waiter: CheckedContinuation<[DeliveryResult], Never>?
    }

    private let state: Locked<State>
    private let onResult: @Sendable (DeliveryResult) -> Void

    /// - Parameters:
    ///   - placeholders: one result per slot, in order (token and notification index set; they
    ///     become FAILED `DeadlineExceeded` when the deadline passes first).
    ///   - onResult: told of every final result as it happens (metrics, events); keep it cheap.
    public init(placeholders: [DeliveryResult], onResult: @escaping @Sendable (DeliveryResult) -> Void = { _ in }) {
        state = Locked(State(
            results: placeholders, filled: Array(repeating: false, count: placeholders.count),
            remaining: placeholders.count))
        self.onResult = onResult
    }

    /// True once the Send was answered: requests not yet sent should be dropped.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Records the final result of `slot`. Later results for a finished Send are ignored.
    func complete(slot: Int, with result: DeliveryResult) {
        let (counted, waiter, results) = state.withLock {
            state -> (Bool, CheckedContinuation<[DeliveryResult], Never>?, [DeliveryResult]) in
            guard !state.finished, !state.filled[slot] else { return (false, nil, []) }
            state.filled[slot] = true
            state.results[slot] = result
            state.remaining -= 1
            guard state.remaining == 0, let waiter = state.waiter else { return (true, nil, []) }
            state.finished = true
            state.waiter = nil
            return (true, waiter, state.results)
        }
        guard counted else { return }
        onResult(result)
        waiter?.resume(returning: results)
    }

    /// Waits for every result, or until `deadline` (then the missing ones are FAILED with reason
    /// `DeadlineExceeded`).
    public func results(deadline: ContinuousClock.Instant?) async -> [DeliveryResult] {
        let timer: Task<Void, Never>? = deadline.map { deadline in
            Task { [self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                if !Task.isCancelled { expire() }
            }
        }
        defer { timer?.cancel() }
        return await withCheckedContinuation { continuation in
            let ready: [DeliveryResult]? = state.withLock { state in
                if state.finished || state.remaining == 0 {
                    state.finished = true
                    return state.results
                }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Ends the Send now: missing results become FAILED `DeadlineExceeded`.
    public func expire() {
        let (waiter, results, expired) = state.withLock {
            state -> (CheckedContinuation<[DeliveryResult], Never>?, [DeliveryResult], [DeliveryResult]) in
            guard !state.finished else { return (nil, [], []) }
            state.finished = true
            var expired: [DeliveryResult] = []
            for slot in state.results.indices where !state.filled[slot] {
                state.results[slot].status = .failed
                state.results[slot].reason = "DeadlineExceeded"
                expired.append(state.results[slot])
            }
            let waiter = state.waiter
            state.waiter = nil
            return (waiter, state.results, expired)
        }
        // These are final results too (events, logs).
        for result in expired { onResult(result) }
        waiter?.resume(returning: results)
    }
}
