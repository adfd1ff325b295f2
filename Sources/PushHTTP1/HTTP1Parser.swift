import CHTTPParser

/// What a parsed message's start line and framing say, handed over when its headers are complete.
public struct HTTP1Head: Sendable, Equatable {
    /// Responses: the status code; requests: 0.
    public var status: Int
    /// Requests: the method (`POST`); responses: empty.
    public var method: String
    /// Requests: the request target (`/messaging/registrations/x/messages`); responses: empty.
    public var target: String
    /// `1.1`, `1.0`.
    public var version: (major: Int, minor: Int)
    /// Whether the connection may carry another message after this one (HTTP/1.1 without
    /// `Connection: close`, or HTTP/1.0 with `keep-alive`).
    public var keepAlive: Bool

    public static func == (a: HTTP1Head, b: HTTP1Head) -> Bool {
        a.status == b.status && a.method == b.method && a.target == b.target && a.version == b.version
            && a.keepAlive == b.keepAlive
    }
}

/// What an ``HTTP1Parser`` reads, in order: headers, the head, body pieces, the end.
public protocol HTTP1ParserDelegate: AnyObject {
    /// One header field, whole (the parser joins the pieces a split read gives). Names are as sent:
    /// compare them case-insensitively.
    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>)
    func http1HeadersComplete(_ head: HTTP1Head)
    /// A piece of the body, de-chunked; may come in several pieces.
    func http1Body(_ bytes: UnsafeRawBufferPointer)
    /// The message is complete; `keepAlive` as in the head (the trailers cannot change it).
    func http1MessageComplete(keepAlive: Bool)
}

/// Why the bytes were not HTTP/1.1.
public struct HTTP1Error: Error, Sendable, CustomStringConvertible {
    /// libhttp-parser's name for it (`HPE_INVALID_CONSTANT`), or ours.
    public let name: String
    public let description: String

    public init(name: String, description: String) {
        self.name = name
        self.description = description
    }
}

/// HTTP/1.1 messages read from a byte stream with libhttp-parser, sans-IO: bytes go in with
/// ``receive(_:)``, the delegate hears each message's parts. Content-Length, chunked and
/// read-until-close bodies, keep-alive rules and pipelined messages are the library's. One parser
/// per connection and direction; not thread-safe.
public final class HTTP1Parser {
    public enum Kind: Sendable { case request, response }

    public weak var delegate: (any HTTP1ParserDelegate)?
    /// Allocated once: the library keeps its state in the struct, and the callbacks find this
    /// object through its `data`.
    private let parser = UnsafeMutablePointer<http_parser>.allocate(capacity: 1)
    private let settings = UnsafeMutablePointer<http_parser_settings>.allocate(capacity: 1)
    private var name: [UInt8] = []
    private var value: [UInt8] = []
    private var inValue = false
    private var target: [UInt8] = []
    /// The next message has no body whatever its headers say (the answer to a CONNECT, or HEAD).
    public var nextHasNoBody = false
    /// Inside a message: its first byte arrived and its end not yet (a client tells by it whether
    /// a server that closed had begun its answer).
    public private(set) var inMessage = false
    /// Past the head of the message being read: header fields now are trailers, which are dropped
    /// (RFC 9110 §6.5.1 lets a recipient discard them; nothing here reads them).
    private var inTrailers = false
    /// The message being read has a chunked body (as its head said).
    private var chunkedBody = false
    /// Requests' line endings are checked as RFC 9112 wants them (``HTTP1FramingCheck``).
    private let strict: Bool
    private var framing = HTTP1FramingCheck()
    /// The buffer being parsed: where the framing not looked at yet begins, and where it ends.
    private var scanFrom: UnsafeRawPointer?
    private var bufferEnd: UnsafeRawPointer?
    /// Why a callback stopped the parser (a framing or header-name violation).
    private var violation: HTTP1Error?
    /// Framing bytes came since the last piece of data the parser handed over.
    private var framedSinceData = false
    /// Bytes received while paused (``pause()``), parsed by ``resume()``.
    private var held: [UInt8] = []
    private var pauseRequested = false

    public init(_ kind: Kind) {
        strict = kind == .request
        http_parser_init(parser, kind == .request ? HTTP_REQUEST : HTTP_RESPONSE)
        http_parser_settings_init(settings)
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        settings.pointee.on_message_begin = { parser in
            let me = HTTP1Parser.owner(parser)
            me.inMessage = true
            me.inTrailers = false
            me.framing.messageBegan()
            return 0
        }
        settings.pointee.on_url = { parser, at, length in
            let me = HTTP1Parser.owner(parser)
            guard me.checkFraming(upTo: at, skipping: length) else { return -1 }
            me.target.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_header_field = { parser, at, length in
            let me = HTTP1Parser.owner(parser)
            guard me.checkFraming(upTo: at, skipping: length) else { return -1 }
            if me.inValue { guard me.emitHeader() else { return -1 } }
            me.framedSinceData = false
            me.name.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_header_value = { parser, at, length in
            let me = HTTP1Parser.owner(parser)
            guard me.checkFraming(upTo: at, skipping: length) else { return -1 }
            if me.strict && me.inValue && me.framedSinceData {
                // A second piece of the value after a line ending: the line was folded (the
                // parser hands the continuation over as more value, its white space included).
                me.violation = HTTP1FramingCheck.Violation.obsFold.error
                return -1
            }
            me.framedSinceData = false
            me.inValue = true
            me.value.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_headers_complete = { parser in
            guard let parser else { return 0 }
            let me = HTTP1Parser.owner(parser)
            if me.inValue { guard me.emitHeader() else { return -1 } }
            guard me.checkFramingToBlankLine() else { return -1 }
            if me.strict && pushgate_http_major(parser) != 1 {
                // libhttp-parser takes `GET /` alone as HTTP/0.9; headers after it are nothing of the kind.
                me.violation = HTTP1Error(name: "http_version", description: "not an HTTP/1.x request line")
                return -1
            }
            me.inTrailers = true
            me.chunkedBody = pushgate_http_chunked(parser) != 0
            let isRequest = parser.pointee.type == HTTP_REQUEST.rawValue
            let head = HTTP1Head(
                status: isRequest ? 0 : Int(pushgate_http_status(parser)),
                method: isRequest ? String(cString: http_method_str(http_method(pushgate_http_method(parser)))) : "",
                target: String(decoding: me.target, as: UTF8.self),
                version: (Int(pushgate_http_major(parser)), Int(pushgate_http_minor(parser))),
                keepAlive: http_should_keep_alive(parser) != 0)
            me.target.removeAll(keepingCapacity: true)
            me.delegate?.http1HeadersComplete(head)
            // 1 tells the library that no body follows.
            if me.nextHasNoBody {
                me.nextHasNoBody = false
                return 1
            }
            return 0
        }
        settings.pointee.on_body = { parser, at, length in
            let me = HTTP1Parser.owner(parser)
            guard me.checkFraming(upTo: at, skipping: length) else { return -1 }
            me.framing.bodyData(chunked: me.chunkedBody)
            me.delegate?.http1Body(UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_message_complete = { parser in
            guard let parser else { return 0 }
            let me = HTTP1Parser.owner(parser)
            // A chunked body ends in a last chunk, trailers and an empty line: framing too. Known
            // from the head: a trailer can clear the library's flag (`Transfer-Encoding: x`).
            if me.chunkedBody { guard me.checkFramingToBlankLine() else { return -1 } }
            // The last trailer field is still pending here: checked as the others, then dropped
            // (it must never become the first header of the next request on the connection).
            if me.inValue { guard me.emitHeader() else { return -1 } }
            me.name.removeAll(keepingCapacity: true)
            me.value.removeAll(keepingCapacity: true)
            me.inValue = false
            me.inMessage = false
            me.delegate?.http1MessageComplete(keepAlive: http_should_keep_alive(parser) != 0)
            if me.pauseRequested {
                me.pauseRequested = false
                http_parser_pause(parser, 1)
            }
            return 0
        }
    }

    deinit {
        parser.deallocate()
        settings.deallocate()
    }

    private static func owner(_ parser: UnsafeMutablePointer<http_parser>?) -> HTTP1Parser {
        Unmanaged<HTTP1Parser>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
    }

    /// Fields that frame a message, which no trailer may carry.
    private static let framingFields: [[UInt8]] = [
        "connection", "transfer-encoding", "content-length", "host", "te", "trailer", "upgrade",
    ].map { Array($0.utf8) }

    /// Hands the field read to the delegate (a trailer to no one). False, with ``violation`` set,
    /// for a request field whose name is not a token: libhttp-parser takes `Transfer-Encoding :`
    /// (space before the colon) for the real header, which RFC 9112 §5.1 says to reject.
    private func emitHeader() -> Bool {
        inValue = false
        defer {
            name.removeAll(keepingCapacity: true)
            value.removeAll(keepingCapacity: true)
        }
        if strict, let bad = name.first(where: { !HTTP1Token.isTokenCharacter($0) }) {
            violation = HTTP1Error(
                name: "invalid_header_name",
                description: "a header field name holds \(bad == 0x20 ? "a space" : "byte \(bad)") (RFC 9112 §5.1)")
            return false
        }
        if inTrailers {
            // The library has acted on framing fields even in trailers (a trailer
            // `Transfer-Encoding` clears its chunked flag, `Connection` its keep-alive): refused,
            // so no one reads this message differently (RFC 9110 §6.5.1).
            let lowered = name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            if strict, Self.framingFields.contains(lowered) {
                violation = HTTP1Error(
                    name: "framing_trailer",
                    description: "a trailer field \(String(decoding: name, as: UTF8.self)) (RFC 9110 §6.5.1)")
                return false
            }
            return true
        }
        name.withUnsafeBufferPointer { name in
            value.withUnsafeBufferPointer { value in delegate?.http1Header(name: name, value: value) }
        }
        return true
    }

    /// Looks at the framing bytes before `at` (a piece of data the parser hands over), then skips
    /// the piece. False, with ``violation`` set, on a line ending RFC 9112 rejects.
    private func checkFraming(upTo at: UnsafePointer<CChar>?, skipping length: Int) -> Bool {
        guard strict, let at, let start = scanFrom else { return true }
        let end = UnsafeRawPointer(at)
        if start < end {
            framedSinceData = true
            if case .failure(let error) = framing.scan(UnsafeRawBufferPointer(start: start, count: end - start)) {
                violation = error
                return false
            }
        }
        scanFrom = end + length
        return true
    }

    /// Looks at the framing from where it stopped up to the end of the head (or of the trailers):
    /// the parser stands on that empty line's LF, somewhere in this buffer.
    private func checkFramingToBlankLine() -> Bool {
        guard strict, let start = scanFrom, let end = bufferEnd, start < end else { return true }
        switch framing.scan(UnsafeRawBufferPointer(start: start, count: end - start), toBlankLine: true) {
        case .success(let taken):
            scanFrom = start + taken
            return true
        case .failure(let error):
            violation = error
            return false
        }
    }

    /// Stops parsing after the message being completed now (called from
    /// ``HTTP1ParserDelegate/http1MessageComplete(keepAlive:)``): the bytes after it are held,
    /// unread, until ``resume()``. How a server stops taking pipelined requests at its limit
    /// inside a single read.
    public func pause() {
        pauseRequested = true
    }

    /// Bytes received and not parsed yet because of ``pause()``.
    public var heldBytes: Int { held.count }

    /// Forgets the bytes held since ``pause()``: nothing after a refusal is read.
    public func dropHeld() {
        held.removeAll()
    }

    /// Parses the bytes held since ``pause()`` (which may pause it again).
    public func resume() throws(HTTP1Error) {
        guard !held.isEmpty else { return }
        let bytes = held
        held.removeAll()
        let result = bytes.withUnsafeBytes { bytes in Result { () throws(HTTP1Error) in try receive(bytes) } }
        try result.get()
    }

    /// Reads `bytes`; the delegate hears what they complete. Throws on anything that is not
    /// HTTP/1.1 (and on an `Upgrade`, which nothing here takes); the parser is unusable after.
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) {
        guard bytes.count > 0 else { return }
        guard held.isEmpty else {
            // Paused: what comes meanwhile waits behind what is held.
            held.append(contentsOf: bytes)
            return
        }
        try execute(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
    }

    /// The peer closed its side: completes a body that runs until the close, and throws if a
    /// message was cut off.
    public func receiveEnd() throws(HTTP1Error) {
        try execute(nil, 0)
    }

    private func execute(_ data: UnsafePointer<CChar>?, _ count: Int) throws(HTTP1Error) {
        scanFrom = data.map { UnsafeRawPointer($0) }
        bufferEnd = data.map { UnsafeRawPointer($0) + count }
        defer {
            scanFrom = nil
            bufferEnd = nil
        }
        let parsed = http_parser_execute(parser, settings, data, count)
        if let violation { throw violation }
        let code = pushgate_http_errno(parser)
        if code == HPE_PAUSED.rawValue, let data {
            http_parser_pause(parser, 0)
            held.append(contentsOf: UnsafeRawBufferPointer(start: data + parsed, count: count - parsed))
            // Framing before the pause is looked at now, the held bytes' when they are parsed.
            bufferEnd = UnsafeRawPointer(data + parsed)
            try scanRestOfBuffer()
            return
        }
        if code != HPE_OK.rawValue {
            let errno = http_errno(code)
            throw HTTP1Error(
                name: String(cString: http_errno_name(errno)),
                description: String(cString: http_errno_description(errno)))
        }
        if pushgate_http_upgrade(parser) != 0 {
            throw HTTP1Error(name: "upgrade", description: "the peer asked to switch protocols")
        }
        if parsed != count {
            throw HTTP1Error(name: "trailing", description: "\(count - parsed) bytes the parser did not take")
        }
        try scanRestOfBuffer()
    }

    /// The framing at the end of the buffer (a head or chunk line the next read goes on with).
    private func scanRestOfBuffer() throws(HTTP1Error) {
        guard strict, let start = scanFrom, let end = bufferEnd, start < end else { return }
        framedSinceData = true
        if case .failure(let error) = framing.scan(UnsafeRawBufferPointer(start: start, count: end - start)) {
            throw error
        }
    }
}
