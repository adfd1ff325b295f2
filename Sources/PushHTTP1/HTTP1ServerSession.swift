/// One request as an ``HTTP1ServerSession`` hands it over: whole, its body capped.
public struct HTTP1Request: Sendable {
    /// Its place on the connection, from 0: answers go out in this order.
    public var sequence = 0
    public var method = ""
    public var target = ""
    /// Header fields in order, names lowercased.
    public var headers: [(name: String, value: String)] = []
    /// The first `maxBodyBytes + 1` bytes of the body; `bodyLength` counts them all.
    public var body: [UInt8] = []
    public var bodyLength = 0
    /// The client may send another request after this one.
    public var keepAlive = true
}

/// Hears the requests of an ``HTTP1ServerSession``.
public protocol HTTP1ServerSessionDelegate: AnyObject {
    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request)
}

/// The server side of one HTTP/1.1 connection, sans-IO: requests read by ``HTTP1Parser`` (a
/// client may pipeline them), answers written in request order whenever they are given, and the
/// connection ended after a request that asked for it (`Connection: close`, HTTP/1.0) or after
/// ``closeAfter(sequence:)``. Not thread-safe.
public final class HTTP1ServerSession: HTTP1ParserDelegate {
    public weak var delegate: (any HTTP1ServerSessionDelegate)?
    private let parser = HTTP1Parser(.request)
    private let maxBodyBytes: Int
    private var current = HTTP1Request()
    private var nextSequence = 0
    /// Answers given out of order, by sequence, until the ones before them are written.
    private var pending: [Int: [UInt8]] = [:]
    private var nextToWrite = 0
    private var output = HTTP1Output()
    /// The last request this connection answers; nil: no end decided yet.
    private var lastSequence: Int?

    public init(maxBodyBytes: Int = 64 << 10) {
        self.maxBodyBytes = maxBodyBytes
        parser.delegate = self
    }

    /// Requests read and not answered yet.
    public var unanswered: Int { nextSequence - nextToWrite }

    /// Ends the connection after the answer to request `sequence` (it says `Connection: close`);
    /// later requests are not read.
    public func closeAfter(sequence: Int) {
        lastSequence = min(lastSequence ?? sequence, sequence)
    }

    /// Answers request `sequence`: status line, `headers`, `Content-Length`, `body`.
    public func respond(
        to sequence: Int, status: Int, reason: String, headers: [(name: String, value: String)], body: [UInt8]
    ) throws(HTTP1Error) {
        var fields = headers
        if sequence == lastSequence { fields.append(("Connection", "close")) }
        var bytes: [UInt8] = []
        try HTTP1Writer.responseHead(
            status: status, reason: reason, headers: fields, contentLength: body.count, into: &bytes)
        bytes.append(contentsOf: body)
        pending[sequence] = bytes
        while let next = pending.removeValue(forKey: nextToWrite) {
            output.append(next)
            nextToWrite += 1
        }
    }

    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) {
        guard lastSequence == nil || nextSequence <= lastSequence! else { return }  // after the last: ignored
        try parser.receive(bytes)
    }

    public func receiveEnd() throws(HTTP1Error) {
        // The client is done sending: answer what was read, then close.
        lastSequence = min(lastSequence ?? (nextSequence - 1), nextSequence - 1)
        try parser.receiveEnd()
    }

    @discardableResult
    public func drainOutput(into buffer: inout [UInt8], maxBytes: Int = 1 << 20) -> Int {
        output.drain(into: &buffer, maxBytes: maxBytes)
    }

    public var wantsWrite: Bool { !output.isEmpty }
    /// Until the last answer is written (then the transport closes once the output is out).
    public var wantsRead: Bool {
        guard let lastSequence else { return true }
        return nextToWrite <= lastSequence
    }

    // MARK: HTTP1ParserDelegate

    public func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let lowered = name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        current.headers.append((String(decoding: lowered, as: UTF8.self), String(decoding: value, as: UTF8.self)))
    }

    public func http1HeadersComplete(_ head: HTTP1Head) {
        current.method = head.method
        current.target = head.target
        current.keepAlive = head.keepAlive
    }

    public func http1Body(_ bytes: UnsafeRawBufferPointer) {
        let room = maxBodyBytes + 1 - current.body.count
        if room > 0 { current.body.append(contentsOf: bytes.prefix(room)) }
        current.bodyLength += bytes.count
    }

    public func http1MessageComplete(keepAlive: Bool) {
        var request = current
        current = HTTP1Request()
        request.sequence = nextSequence
        nextSequence += 1
        if !keepAlive { closeAfter(sequence: request.sequence) }
        guard lastSequence.map({ request.sequence <= $0 }) ?? true else { return }
        delegate?.http1Session(self, didReceive: request)
    }
}
