/// Reassembles gRPC `Length-Prefixed-Message`s from DATA frame payloads, whose boundaries are
/// unrelated to message boundaries.
///
/// Feed it with ``append(_:)`` and drain it with ``next()`` until that returns nil. Errors are
/// sticky: once ``next()`` has thrown, it throws the same status again and further input is
/// dropped, since the stream can no longer be framed.
public struct GRPCMessageDeframer {
    /// The largest message body accepted, in bytes.
    public let maxMessageSize: Int
    // Usable from inline for ``pendingMessageSize``: a receiver in another module (a call, which
    // keeps its deframer in a class) called the getter on a copy of the whole deframer, its buffer
    // and failure copied and destroyed through type metadata at each message boundary.
    @usableFromInline var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` start; consumed bytes are dropped lazily (see `compact`).
    @usableFromInline var readIndex = 0
    @usableFromInline var failure: GRPCStatus?
    /// A whole message that came alone in one ``append(_:)`` with nothing buffered (a unary
    /// request in one DATA frame, nearly every call): copied once, from the frame to the message,
    /// instead of into `buffer` and out again.
    @usableFromInline var whole: GRPCMessage?

    /// Creates a deframer that rejects messages over `maxMessageSize` bytes.
    public init(maxMessageSize: Int) {
        precondition(maxMessageSize >= 0, "maxMessageSize must not be negative")
        self.maxMessageSize = maxMessageSize
    }

    /// True when some bytes are buffered that don't yet form a whole message. At END_STREAM this
    /// means the peer sent a truncated message.
    public var hasPartialMessage: Bool { readIndex < buffer.count }

    /// The whole size (prefix and body) of the message being assembled, once its prefix has
    /// arrived: what a receiver reserves before the body comes. nil between messages, before a
    /// whole prefix, and after a failure.
    @inlinable
    public var pendingMessageSize: Int? {
        if let whole { return GRPCMessageFramer.prefixSize + whole.bytes.count }
        guard failure == nil, buffer.count - readIndex >= GRPCMessageFramer.prefixSize else { return nil }
        return GRPCMessageFramer.prefixSize + declaredLength(at: readIndex + 1)
    }

    /// The most room made for a message before its bytes arrive.
    static let maxReservedAhead = 64 << 20

    /// Bytes received but not yet returned as messages.
    public var bufferedByteCount: Int {
        buffer.count - readIndex + (whole.map { GRPCMessageFramer.prefixSize + $0.bytes.count } ?? 0)
    }

    /// Bytes held in storage, including consumed ones not yet dropped (for tests of compaction).
    var storedByteCount: Int { buffer.count }

    /// Buffers received bytes. The caller owns `bytes`; they are copied.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        if whole == nil, buffer.isEmpty, let message = Self.wholeMessage(bytes, maxMessageSize: maxMessageSize) {
            whole = message
            return
        }
        if let message = whole.take() {
            // More bytes behind it: it goes back in front of them, and the usual path goes on.
            GRPCMessageFramer.append(message.bytes, compressed: message.compressed, to: &buffer)
        }
        compact()
        // Room for the whole declared message at once (within the limit, and never more than
        // 64 MiB on a declaration alone): growing by doubling would hold up to twice the message
        // while it arrives. A server has reserved the declared size in its request budget already.
        if let size = pendingMessageSize, size - GRPCMessageFramer.prefixSize <= maxMessageSize,
            size <= Self.maxReservedAhead,
            buffer.count + bytes.count > buffer.capacity, buffer.count + bytes.count <= size
        {
            buffer.reserveCapacity(size)
        }
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete message, or nil if more bytes are needed.
    ///
    /// - Throws: `RESOURCE_EXHAUSTED` as soon as a prefix declares a body over ``maxMessageSize``
    ///   (before its body arrives), `INTERNAL` for a compressed flag other than 0 or 1.
    public mutating func next() throws(GRPCStatus) -> GRPCMessage? {
        if let failure { throw failure }
        if let whole = whole.take() { return whole }
        let available = buffer.count - readIndex
        guard available >= GRPCMessageFramer.prefixSize else { return nil }
        let flag = buffer[readIndex]
        let length = declaredLength(at: readIndex + 1)
        if flag > 1 {
            return try fail(.internalError("invalid compressed flag \(flag) in a gRPC message prefix"))
        }
        if length > maxMessageSize {
            return try fail(
                .resourceExhausted(
                    "message of \(length) bytes exceeds the limit of \(maxMessageSize) bytes"))
        }
        guard available - GRPCMessageFramer.prefixSize >= length else { return nil }
        let start = readIndex + GRPCMessageFramer.prefixSize
        let message = GRPCMessage(compressed: flag == 1, bytes: Array(buffer[start..<start + length]))
        readIndex = start + length
        if readIndex == buffer.count { compact() }  // drained: release now, not on the next append
        return message
    }

    /// `bytes` as one message when they are exactly one valid one (prefix and body); nil for
    /// anything else (part of one, several, a bad flag, too long: the buffered path says which).
    private static func wholeMessage(_ bytes: UnsafeRawBufferPointer, maxMessageSize: Int) -> GRPCMessage? {
        guard bytes.count >= GRPCMessageFramer.prefixSize, bytes[0] <= 1 else { return nil }
        let length = declaredLength(in: bytes, at: 1)
        guard length <= maxMessageSize, GRPCMessageFramer.prefixSize + length == bytes.count else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[GRPCMessageFramer.prefixSize...])
        return GRPCMessage(compressed: bytes[0] == 1, bytes: Array(body))
    }

    @inlinable
    func declaredLength(at index: Int) -> Int {
        Self.declaredLength(in: buffer, at: index)
    }

    /// The big-endian length of a prefix whose four length bytes start at `index` of `bytes`.
    @inlinable
    static func declaredLength<Bytes: RandomAccessCollection<UInt8>>(in bytes: Bytes, at index: Int) -> Int
    where Bytes.Index == Int {
        var length = 0
        for i in index..<index + 4 { length = length << 8 | Int(bytes[i]) }
        return length
    }

    private mutating func fail(_ status: GRPCStatus) throws(GRPCStatus) -> GRPCMessage? {
        failure = status
        whole = nil
        buffer = []
        readIndex = 0
        throw status
    }

    /// Drops consumed bytes so the buffer holds at most the message being assembled plus new input.
    /// Everything consumed goes at once when the buffer is drained (no copy); otherwise the unread
    /// tail moves to the front, which copies at most one partial message.
    private mutating func compact() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else {
            buffer.removeSubrange(0..<readIndex)
        }
        readIndex = 0
    }
}
