import PushCore

/// The request messages of one call, in order, as the client sends them.
///
/// The sequence ends when the client half-closes. When the call fails in the transport (a truncated
/// or oversized message, a reset, the deadline) the sequence also ends; the transport has then
/// already answered the client, and whatever the handler does next is ignored.
public struct GRPCRequestStream: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    let messages: AsyncStream<[UInt8]>

    public func makeAsyncIterator() -> AsyncStream<[UInt8]>.AsyncIterator {
        messages.makeAsyncIterator()
    }

    /// The one message of a unary or server-streaming request.
    /// - Throws: INVALID_ARGUMENT when the client sent no message or more than one.
    public func single() async throws(GRPCStatus) -> [UInt8] {
        var iterator = messages.makeAsyncIterator()
        guard let first = await iterator.next() else {
            throw GRPCStatus(.invalidArgument, "the call ended without a request message")
        }
        if await iterator.next() != nil {
            throw GRPCStatus(.invalidArgument, "the method takes one request message; the client sent more")
        }
        return first
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
