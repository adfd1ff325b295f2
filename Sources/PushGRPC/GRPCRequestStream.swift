public import PushCore
import PushPosix
import PushSync

/// The request messages of one call, in order, as the client sends them.
///
/// The sequence ends when the client half-closes. When the call fails in the transport (a truncated
/// or oversized message, a reset, the deadline) the sequence also ends; the transport has then
/// already answered the client, and whatever the handler does next is ignored.
public struct GRPCRequestStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = Never
    let messages: GRPCRequestMessages

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = [UInt8]
        public typealias Failure = Never
        let messages: GRPCRequestMessages

        public mutating func next() async -> [UInt8]? {
            await messages.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(messages: messages)
    }

    /// The one message of a unary or server-streaming request.
    /// - Throws: INVALID_ARGUMENT when the client sent no message or more than one.
    public func single() async throws(GRPCStatus) -> [UInt8] {
        guard let first = await messages.next() else {
            throw GRPCStatus(.invalidArgument, "the call ended without a request message")
        }
        if await messages.next() != nil {
            throw GRPCStatus(.invalidArgument, "the method takes one request message; the client sent more")
        }
        return first
    }
}

/// The queue between a call's loop, which adds the messages as they are deframed, and its handler
/// task, which takes them: one consumer, messages in order, then the end.
///
/// Not an `AsyncStream`: its generic storage is not specialized for us (run-time metadata look-ups
/// on every yield, next and finish) and costs several allocations per call, a large share of a
/// unary call's cost. The call finishes the queue whenever it stops its handler
/// (end of call, reset, deadline), which is also what wakes a handler waiting here on cancellation.
///
/// Each message carries the share of the connection's ``GRPCRequestBudget`` reserved for it,
/// given back when the handler takes it (or when the queue is cancelled or freed); `onDrained`
/// runs, on the taker's thread, whenever a take leaves the queue empty, so the call can reopen
/// the client's flow-control window it kept shut while its handler was behind.
final class GRPCRequestMessages: Sendable {
    private struct Entry {
        let bytes: [UInt8]
        let reserved: Int
    }

    private struct State {
        var buffered: [Entry] = []
        var head = 0
        var finished = false
        /// The consumer's task was cancelled: `next` answers nil from now on.
        var consumerCancelled = false
        var waiter: UnsafeContinuation<[UInt8]?, Never>?

        /// The next message (`.some(nil)` once finished and drained), or nil when the caller must wait.
        mutating func take() -> Entry?? {
            if head < buffered.count {
                let entry = buffered[head]
                head += 1
                if head == buffered.count {
                    buffered.removeAll(keepingCapacity: true)
                    head = 0
                }
                return .some(entry)
            }
            return finished ? .some(nil) : nil
        }

        /// Drops what is buffered; returns the bytes reserved for it.
        mutating func drop() -> Int {
            let reserved = buffered[head...].reduce(0) { $0 + $1.reserved }
            buffered.removeAll()
            head = 0
            return reserved
        }
    }

    private let state = Locked(State())
    private let budget: GRPCRequestBudget?
    private let onDrained: (@Sendable () -> Void)?

    init(budget: GRPCRequestBudget? = nil, onDrained: (@Sendable () -> Void)? = nil) {
        self.budget = budget
        self.onDrained = onDrained
    }

    deinit {
        let reserved = state.withLock { $0.drop() }
        budget?.release(reserved)
    }

    /// Messages are waiting for the handler.
    var isBacklogged: Bool { state.withLock { $0.head < $0.buffered.count } }

    /// Adds a message holding `reserved` bytes of the budget (released at once if finished). Any thread.
    func yield(_ message: [UInt8], reserved: Int = 0) {
        let waiter = state.withLock { state -> UnsafeContinuation<[UInt8]?, Never>?? in
            guard !state.finished else { return .some(nil) }
            if let waiter = state.waiter {
                // Waiting means nothing is buffered: hand this one over directly.
                state.waiter = nil
                return waiter
            }
            state.buffered.append(Entry(bytes: message, reserved: reserved))
            return nil
        }
        switch waiter {
        case .some(.some(let waiter)):
            budget?.release(reserved)
            waiter.resume(returning: message)
        case .some(.none):
            budget?.release(reserved)
        case .none:
            break
        }
    }

    /// Ends the sequence after the messages already added. Any thread; idempotent.
    func finish() {
        let waiter = state.withLock { state -> UnsafeContinuation<[UInt8]?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Ends the sequence now, dropping the messages not taken yet (the call is over).
    func cancel() {
        let (waiter, reserved) = state.withLock { state -> (UnsafeContinuation<[UInt8]?, Never>?, Int) in
            state.finished = true
            defer { state.waiter = nil }
            return (state.waiter, state.drop())
        }
        budget?.release(reserved)
        waiter?.resume(returning: nil)
    }

    /// The next message, or nil at the end, or nil once the consumer's task is cancelled (so a
    /// handler's child task reading requests can be cancelled while the client still sends).
    /// One consumer at a time.
    func next() async -> [UInt8]? {
        if let ready = take() { return ready?.bytes }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let ready = state.withLock { state -> Entry?? in
                    if state.consumerCancelled { return .some(nil) }
                    if let ready = state.take() { return ready }
                    precondition(state.waiter == nil, "GRPCRequestStream: one consumer at a time")
                    state.waiter = continuation
                    return nil
                }
                if let ready {
                    taken(ready)
                    continuation.resume(returning: ready?.bytes)
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> UnsafeContinuation<[UInt8]?, Never>? in
                state.consumerCancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    private func take() -> Entry?? {
        guard let ready = state.withLock({ $0.consumerCancelled ? .some(nil) : $0.take() }) else { return nil }
        taken(ready)
        return ready
    }

    private func taken(_ entry: Entry?) {
        guard let entry else { return }
        budget?.release(entry.reserved)
        if let onDrained, !isBacklogged { onDrained() }
    }
}

/// Sends response messages of one call. Usable from any thread; messages go out in call order.
public struct GRPCResponseWriter: Sendable {
    /// Response bytes a call may have waiting for the client's flow-control window before `send`
    /// waits: a client that does not read cannot make the server buffer without bound.
    static let maxQueuedBytes = 1 << 20

    let call: any GRPCCallTarget

    /// Queues one response message on the call's connection (ignored once the call has ended), and
    /// returns once the call has at most ``maxQueuedBytes`` waiting for the client, or has ended.
    /// The wait is woken by the connection's flushes (``GRPCCallTarget/waitForDrain(limit:)``),
    /// not by polling.
    public func send(_ message: [UInt8]) async {
        let call = self.call
        if call.loop.inEventLoop {
            // The usual case (the handler task prefers the call's loop): queue it now, so it joins
            // this turn's flush with whatever else the call writes in the turn.
            call.sendMessage(message)
        } else {
            call.loop.execute { call.sendMessage(message) }
        }
        await call.waitForDrain(limit: Self.maxQueuedBytes)
    }
}
