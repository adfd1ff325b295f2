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

    public init() {}

    /// The first value of header `name` (lowercase).
    public func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value
    }

    /// Its head says a body follows (a non-zero `Content-Length`, or `Transfer-Encoding`).
    public var declaresBody: Bool {
        if header("transfer-encoding") != nil { return true }
        return header("content-length").map { $0 != "0" } ?? false
    }
}

/// Hears the requests of an ``HTTP1ServerSession``.
public protocol HTTP1ServerSessionDelegate: AnyObject {
    /// A request's head is complete (`request` has no body yet): how many of its body bytes the
    /// session should keep (the rest is counted and dropped). A server decides here what it can
    /// from the head alone (who the caller is, whether the body fits), before the body arrives.
    func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int
    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request)
    /// The body of the request being read passed the limit the delegate gave (once; the rest is
    /// still counted and dropped): the moment to refuse it with
    /// ``HTTP1ServerSession/respondBeforeBody(status:reason:headers:body:)`` rather than wait for
    /// a body of any size to end.
    func http1Session(_ session: HTTP1ServerSession, bodyPassedLimitOf request: HTTP1Request)
}

extension HTTP1ServerSessionDelegate {
    public func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
        session.maxBodyBytes
    }

    public func http1Session(_ session: HTTP1ServerSession, bodyPassedLimitOf request: HTTP1Request) {}
}

/// The server side of one HTTP/1.1 connection, sans-IO: requests read by ``HTTP1Parser`` (a
/// client may pipeline them), answers written in request order whenever they are given (whole, or
/// streamed in chunks), and the connection ended after a request that asked for it
/// (`Connection: close`, HTTP/1.0) or after ``closeAfter(sequence:)``. Bytes that are not HTTP/1.1
/// are answered 400 with the parser's reason, after the answers before them, and end the
/// connection. Not thread-safe.
public final class HTTP1ServerSession: HTTP1ParserDelegate {
    public weak var delegate: (any HTTP1ServerSessionDelegate)?
    private let parser = HTTP1Parser(.request)
    /// The body bytes kept per request unless the delegate says otherwise.
    public let maxBodyBytes: Int
    private var current = HTTP1Request()
    private var currentBodyLimit = 0
    private var nextSequence = 0
    /// Answers (or their beginnings, for streamed ones) given before the ones ahead of them were
    /// written, by sequence; `complete` once their last byte is given.
    private var pending: [Int: (bytes: [UInt8], complete: Bool)] = [:]
    private var nextToWrite = 0
    private var output = HTTP1Output()
    /// The last request this connection answers; nil: no end decided yet.
    private var lastSequence: Int?
    /// The bytes stopped being HTTP/1.1: nothing more is read.
    public private(set) var failure: HTTP1Error?

    public init(maxBodyBytes: Int = 64 << 10) {
        self.maxBodyBytes = maxBodyBytes
        parser.delegate = self
    }

    /// Requests read and not answered yet.
    public var unanswered: Int { nextSequence - nextToWrite }

    /// Pipelined requests read and not answered before the session stops reading from the
    /// client (``isBackedUp``), so a client cannot queue answers without bound. Default 32.
    public var maxUnanswered = 32

    /// Answer bytes the session holds (given, not drained by the transport yet) before it stops
    /// reading: answers given at once (a health check) never count as unanswered, and one read
    /// of pipelined requests would otherwise become answers without bound. Default 256 KiB.
    public var maxBufferedAnswerBytes = 256 << 10

    /// Answer bytes given and not drained yet: in order, and waiting behind an earlier answer.
    public private(set) var bufferedAnswerBytes = 0

    /// Answer bytes the transport could write now (in order): what a client that does not read
    /// leaves behind. Answers waiting behind an unanswered request are not the client's doing.
    public var writableAnswerBytes: Int { output.count }

    /// The client has ``maxUnanswered`` requests waiting for answers, or their answers are more
    /// than ``maxBufferedAnswerBytes``: read no more for now. Checked after every request, so
    /// the limit holds inside one read too (the bytes after it are held, unparsed, until
    /// ``resume()``).
    public var isBackedUp: Bool { unanswered >= maxUnanswered || bufferedAnswerBytes >= maxBufferedAnswerBytes }

    /// Parses what was held when the session backed up (which may back it up again).
    public func resume() throws(HTTP1Error) {
        guard failure == nil else { return }
        do {
            try parser.resume()
            if endReceived && parser.heldBytes == 0 {
                endReceived = false
                try receiveEnd()
            }
        } catch {
            refuse(error)
        }
    }

    /// Bytes received and not parsed yet, held since the session backed up.
    public var heldBytes: Int { parser.heldBytes }

    /// Ends the connection after the answer to request `sequence` (it says `Connection: close`);
    /// later requests are not read.
    public func closeAfter(sequence: Int) {
        lastSequence = min(lastSequence ?? sequence, sequence)
    }

    /// Answers the request being read before (the rest of) its body, from
    /// ``HTTP1ServerSessionDelegate/http1Session(_:bodyLimitFor:)`` (return 0 there) or
    /// ``HTTP1ServerSessionDelegate/http1Session(_:bodyPassedLimitOf:)``: a refusal that needs
    /// none of the body (a missing key, a body over the limit). The client
    /// need not send the body for it (RFC 9112 §9.3), so this is the connection's last answer: the
    /// body is read and dropped, nothing after it is read, and the connection closes once the
    /// answer is out.
    ///
    /// Returns false, answering nothing, when there is no such request (past the last answer):
    /// the caller then answers it as any other, once its body is read.
    @discardableResult
    public func respondBeforeBody(
        status: Int, reason: String, headers: [(name: String, value: String)], body: [UInt8]
    ) throws(HTTP1Error) -> Bool {
        let sequence = current.sequence
        guard sequence == nextSequence, !isPastLast else { return false }
        closeAfter(sequence: sequence)
        // Counted now: the message's end (if it comes) is past the last and hands nothing over.
        nextSequence += 1
        try respond(to: sequence, status: status, reason: reason, headers: headers, body: body)
        return true
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
        give(bytes, to: sequence, complete: true)
    }

    /// Begins a streamed answer to request `sequence` (`Transfer-Encoding: chunked`): its body
    /// follows in ``respondChunk(to:_:)`` calls and ends with ``respondEnd(to:)``. Answers after
    /// it wait until it ends.
    public func respondHead(
        to sequence: Int, status: Int, reason: String, headers: [(name: String, value: String)]
    ) throws(HTTP1Error) {
        var fields = headers + [("Transfer-Encoding", "chunked")]
        if sequence == lastSequence { fields.append(("Connection", "close")) }
        var bytes: [UInt8] = []
        try HTTP1Writer.responseHead(status: status, reason: reason, headers: fields, contentLength: nil, into: &bytes)
        give(bytes, to: sequence, complete: false)
    }

    /// One chunk of a streamed answer (empty chunks are skipped: an empty one would end it).
    public func respondChunk(to sequence: Int, _ chunk: [UInt8]) {
        guard !chunk.isEmpty else { return }
        var bytes = Array(String(chunk.count, radix: 16).utf8)
        bytes.append(contentsOf: [0x0D, 0x0A])
        bytes.append(contentsOf: chunk)
        bytes.append(contentsOf: [0x0D, 0x0A])
        give(bytes, to: sequence, complete: false)
    }

    /// Ends a streamed answer.
    public func respondEnd(to sequence: Int) {
        give(Array("0\r\n\r\n".utf8), to: sequence, complete: true)
    }

    private func give(_ bytes: [UInt8], to sequence: Int, complete: Bool) {
        guard sequence >= nextToWrite else { return }  // answered already
        bufferedAnswerBytes += bytes.count
        if sequence == nextToWrite && pending[sequence] == nil {
            output.append(bytes)
            if complete { nextToWrite += 1 }
        } else {
            pending[sequence, default: ([], false)].bytes.append(contentsOf: bytes)
            pending[sequence]!.complete = complete
        }
        // The answers after it that were given whole (or begun) meanwhile.
        while let next = pending[nextToWrite] {
            output.append(next.bytes)
            guard next.complete else {
                pending[nextToWrite] = ([], false)
                break
            }
            pending[nextToWrite] = nil
            nextToWrite += 1
        }
    }

    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) {
        // After the last request, or after bytes that were not HTTP/1.1: ignored.
        guard failure == nil, lastSequence == nil || nextSequence <= lastSequence! else { return }
        do {
            try parser.receive(bytes)
        } catch {
            refuse(error)
        }
    }

    public func receiveEnd() throws(HTTP1Error) {
        guard failure == nil else { return }
        guard parser.heldBytes == 0 else {
            // Requests are still held behind the limit: the end comes after them (``resume()``).
            endReceived = true
            return
        }
        // The message being read is past the last answer (refused before its body, or after a
        // graceful close): its end was never going to be read, so a cut-off body is no error.
        let cutOffPastLast = isPastLast
        // The client is done sending: answer what was read, then close.
        lastSequence = min(lastSequence ?? (nextSequence - 1), nextSequence - 1)
        guard !cutOffPastLast else { return }
        try parser.receiveEnd()
    }

    /// The client's end arrived while requests were held.
    private var endReceived = false

    /// Bytes that are not HTTP/1.1: a 400 saying why takes the next request's place, and ends
    /// the connection.
    private func refuse(_ error: HTTP1Error) {
        failure = error
        parser.dropHeld()
        // Past the connection's last answer (after Connection: close, or an answer before a body):
        // nothing more is said.
        guard !isPastLast else { return }
        let sequence = nextSequence
        nextSequence += 1
        closeAfter(sequence: sequence)
        try? respond(
            to: sequence, status: 400, reason: "Bad Request",
            headers: [("Content-Type", "text/plain; charset=utf-8")],
            body: Array("bad request: \(error.description) (\(error.name))\n".utf8))
    }

    @discardableResult
    public func drainOutput(into buffer: inout [UInt8], maxBytes: Int = 1 << 20) -> Int {
        let drained = output.drain(into: &buffer, maxBytes: maxBytes)
        bufferedAnswerBytes -= drained
        return drained
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

    /// The request being read comes after the last one this connection answers (pipelined
    /// behind a `Connection: close` in the same read): it is parsed and dropped, never counted.
    private var isPastLast: Bool { lastSequence.map { nextSequence > $0 } ?? false }

    public func http1HeadersComplete(_ head: HTTP1Head) {
        current.method = head.method
        current.target = head.target
        current.keepAlive = head.keepAlive
        current.sequence = nextSequence
        guard !isPastLast else {
            currentBodyLimit = 0
            return
        }
        currentBodyLimit = delegate?.http1Session(self, bodyLimitFor: current) ?? maxBodyBytes
        // A client that waits for `100 Continue` before its body (curl does past 1 KiB) gets it at
        // once when the body is wanted and nothing is ahead of it to answer; otherwise it sends the
        // body after its own wait (RFC 9110 §10.1.1), or reads the early answer.
        if currentBodyLimit > 0, current.sequence == nextToWrite, pending.isEmpty,
            current.header("expect")?.lowercased() == "100-continue"
        {
            let interim = "HTTP/1.1 100 Continue\r\n\r\n".utf8
            output.append(interim)
            bufferedAnswerBytes += interim.count
        }
    }

    public func http1Body(_ bytes: UnsafeRawBufferPointer) {
        let room = currentBodyLimit + 1 - current.body.count
        if room > 0 { current.body.append(contentsOf: bytes.prefix(room)) }
        let before = current.bodyLength
        current.bodyLength += bytes.count
        if currentBodyLimit > 0, before <= currentBodyLimit, current.bodyLength > currentBodyLimit, !isPastLast {
            delegate?.http1Session(self, bodyPassedLimitOf: current)
        }
    }

    public func http1MessageComplete(keepAlive: Bool) {
        var request = current
        current = HTTP1Request()
        guard !isPastLast else { return }
        request.sequence = nextSequence
        nextSequence += 1
        // Keep-alive as the head said: a trailer (`Connection: close`) must not change it, as a
        // front end that drops trailers would not.
        if !request.keepAlive { closeAfter(sequence: request.sequence) }
        delegate?.http1Session(self, didReceive: request)
        if isBackedUp { parser.pause() }
    }
}
