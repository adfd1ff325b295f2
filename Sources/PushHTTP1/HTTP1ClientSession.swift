/// The client side of one HTTP/1.1 keep-alive connection, sans-IO: one request at a time (no
/// pipelining: a server may close between requests, and a pipelined request would then be lost
/// without a trace of whether it was processed), the answer read by ``HTTP1Parser``.
///
/// Bytes in through ``receive(_:)`` (and ``receiveEnd()`` at the peer's close), bytes out through
/// ``drainOutput(into:maxBytes:)``; the delegate hears the answer's parts. After an answer with
/// `Connection: close` (or an HTTP/1.0 answer without keep-alive) the session wants neither to
/// read nor to write: the transport then closes. Not thread-safe.
public final class HTTP1ClientSession: HTTP1ParserDelegate {
    /// Hears the answers (informational 1xx answers are skipped).
    public weak var delegate: (any HTTP1ParserDelegate)?
    private let parser = HTTP1Parser(.response)
    private var output = HTTP1Output()
    /// A request was sent and its answer is not complete.
    public private(set) var awaitingAnswer = false
    /// No more requests: the server said `Connection: close`, or ``finish()`` was called.
    public private(set) var isFinished = false
    /// Requests answered on this connection so far.
    public private(set) var answered = 0
    private var skippingInformational = false
    private var unsolicited = false
    /// The answer's header fields, held until its status says whether it is informational.
    private var fields: [UInt8] = []
    private var fieldBounds: [(nameEnd: Int, valueEnd: Int)] = []

    public init() {
        parser.delegate = self
    }

    /// Whether a byte of the current answer has arrived: a server that closes before that did not
    /// answer (on a kept-alive connection it may have closed it as idle, and the request can go
    /// again on a new one); after that it did begin.
    public var answerStarted: Bool { parser.inMessage }

    /// Whether a request may be sent now.
    public var canSend: Bool { !awaitingAnswer && !isFinished }

    /// Queues one request: its head (``HTTP1Writer/requestHead``) and body.
    public func send(head: [UInt8], body: UnsafeRawBufferPointer) {
        precondition(canSend, "HTTP/1.1: one request at a time")
        awaitingAnswer = true
        output.append(head)
        output.append(body)
    }

    /// No more requests after the one in flight (if any).
    public func finish() { isFinished = true }

    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) {
        try parser.receive(bytes)
        if unsolicited {
            throw HTTP1Error(name: "unsolicited", description: "the server sent bytes no request asked for")
        }
    }

    /// The server closed its side. Throws if that cut an answer off.
    public func receiveEnd() throws(HTTP1Error) {
        isFinished = true
        try parser.receiveEnd()
    }

    /// Moves up to `maxBytes` of pending output into `buffer`; returns how many.
    @discardableResult
    public func drainOutput(into buffer: inout [UInt8], maxBytes: Int = 1 << 20) -> Int {
        output.drain(into: &buffer, maxBytes: maxBytes)
    }

    public var wantsWrite: Bool { !output.isEmpty }
    /// While an answer is awaited, or the connection may carry more.
    public var wantsRead: Bool { awaitingAnswer || !isFinished }

    // MARK: HTTP1ParserDelegate

    public func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        guard awaitingAnswer else {
            unsolicited = true
            return
        }
        fields.append(contentsOf: name)
        let nameEnd = fields.count
        fields.append(contentsOf: value)
        fieldBounds.append((nameEnd, fields.count))
    }

    public func http1HeadersComplete(_ head: HTTP1Head) {
        guard awaitingAnswer else {
            unsolicited = true
            return
        }
        // 100 Continue and the like precede the answer (we never ask for them; a server may send them).
        skippingInformational = head.status >= 100 && head.status < 200
        if !skippingInformational, let delegate {
            fields.withUnsafeBufferPointer { all in
                var start = 0
                for (nameEnd, valueEnd) in fieldBounds {
                    delegate.http1Header(
                        name: UnsafeBufferPointer(rebasing: all[start..<nameEnd]),
                        value: UnsafeBufferPointer(rebasing: all[nameEnd..<valueEnd]))
                    start = valueEnd
                }
            }
            delegate.http1HeadersComplete(head)
        }
        fields.removeAll(keepingCapacity: true)
        fieldBounds.removeAll(keepingCapacity: true)
    }

    public func http1Body(_ bytes: UnsafeRawBufferPointer) {
        if awaitingAnswer && !skippingInformational { delegate?.http1Body(bytes) }
    }

    public func http1MessageComplete(keepAlive: Bool) {
        guard awaitingAnswer else {
            unsolicited = true
            return
        }
        if skippingInformational {
            skippingInformational = false
            return
        }
        awaitingAnswer = false
        answered += 1
        if !keepAlive { isFinished = true }
        delegate?.http1MessageComplete(keepAlive: keepAlive)
    }
}

/// What a transport needs of an HTTP/1.1 session, client or server side.
public protocol HTTP1Session: AnyObject {
    func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error)
    /// The peer closed its side.
    func receiveEnd() throws(HTTP1Error)
    func drainOutput(into buffer: inout [UInt8], maxBytes: Int) -> Int
    var wantsRead: Bool { get }
    var wantsWrite: Bool { get }
}

extension HTTP1ClientSession: HTTP1Session {}
extension HTTP1ServerSession: HTTP1Session {}
