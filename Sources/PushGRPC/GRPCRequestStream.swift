import PushCore
import PushPosix

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
/// on every yield, next and finish) and costs several allocations per call; a unary call paid
/// about 15,000 instructions for it. The call finishes the queue whenever it stops its handler
/// (end of call, reset, deadline), which is also what wakes a handler waiting here on cancellation.
final class GRPCRequestMessages: Sendable {
    private struct State {
        var buffered: [[UInt8]] = []
        var head = 0
        var finished = false
        var waiter: UnsafeContinuation<[UInt8]?, Never>?

        /// The next message (`.some(nil)` once finished and drained), or nil when the caller must wait.
        mutating func take() -> [UInt8]?? {
            if head < buffered.count {
                let message = buffered[head]
                head += 1
                if head == buffered.count {
                    buffered.removeAll(keepingCapacity: true)
                    head = 0
                }
                return .some(message)
            }
            return finished ? .some(nil) : nil
        }
    }

    private let state = Locked(State())

    /// Adds a message (ignored once finished). Any thread.
    func yield(_ message: [UInt8]) {
        let waiter = state.withLock { state -> UnsafeContinuation<[UInt8]?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                // Waiting means nothing is buffered: hand this one over directly.
                state.waiter = nil
                return waiter
            }
            state.buffered.append(message)
            return nil
        }
        waiter?.resume(returning: message)
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

    /// The next message, or nil at the end. One consumer at a time.
    func next() async -> [UInt8]? {
        if let ready = state.withLock({ $0.take() }) { return ready }
        return await withUnsafeContinuation { continuation in
            let ready = state.withLock { state -> [UInt8]?? in
                if let ready = state.take() { return ready }
                precondition(state.waiter == nil, "GRPCRequestStream: one consumer at a time")
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// Sends response messages of one call. Usable from any thread; messages go out in call order.
public struct GRPCResponseWriter: Sendable {
    /// Response bytes a call may have waiting for the client's flow-control window before `send`
    /// waits: a client that does not read cannot make the server buffer without bound.
    static let maxQueuedBytes = 1 << 20

    let call: GRPCServerCall

    /// Queues one response message on the call's connection (ignored once the call has ended), and
    /// returns once the call has less than ``maxQueuedBytes`` waiting for the client.
    public func send(_ message: [UInt8]) async {
        let call = self.call
        if call.loop.inEventLoop {
            // The usual case (the handler task prefers the call's loop): queue it now, so it joins
            // this turn's flush with whatever else the call writes in the turn.
            call.sendMessage(message)
        } else {
            call.loop.execute { call.sendMessage(message) }
        }
        while !Task.isCancelled {
            guard await call.isBackedUp(limit: Self.maxQueuedBytes) else { return }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
