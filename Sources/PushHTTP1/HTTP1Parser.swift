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

    public init(_ kind: Kind) {
        http_parser_init(parser, kind == .request ? HTTP_REQUEST : HTTP_RESPONSE)
        http_parser_settings_init(settings)
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        settings.pointee.on_message_begin = { parser in
            HTTP1Parser.owner(parser).inMessage = true
            return 0
        }
        settings.pointee.on_url = { parser, at, length in
            HTTP1Parser.owner(parser).target.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_header_field = { parser, at, length in
            let me = HTTP1Parser.owner(parser)
            if me.inValue { me.emitHeader() }
            me.name.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_header_value = { parser, at, length in
            let me = HTTP1Parser.owner(parser)
            me.inValue = true
            me.value.append(contentsOf: UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_headers_complete = { parser in
            guard let parser else { return 0 }
            let me = HTTP1Parser.owner(parser)
            if me.inValue { me.emitHeader() }
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
            HTTP1Parser.owner(parser).delegate?.http1Body(UnsafeRawBufferPointer(start: at, count: length))
            return 0
        }
        settings.pointee.on_message_complete = { parser in
            guard let parser else { return 0 }
            let me = HTTP1Parser.owner(parser)
            me.inMessage = false
            me.delegate?.http1MessageComplete(keepAlive: http_should_keep_alive(parser) != 0)
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

    private func emitHeader() {
        inValue = false
        name.withUnsafeBufferPointer { name in
            value.withUnsafeBufferPointer { value in delegate?.http1Header(name: name, value: value) }
        }
        name.removeAll(keepingCapacity: true)
        value.removeAll(keepingCapacity: true)
    }

    /// Reads `bytes`; the delegate hears what they complete. Throws on anything that is not
    /// HTTP/1.1 (and on an `Upgrade`, which nothing here takes); the parser is unusable after.
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) {
        guard bytes.count > 0 else { return }
        try execute(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
    }

    /// The peer closed its side: completes a body that runs until the close, and throws if a
    /// message was cut off.
    public func receiveEnd() throws(HTTP1Error) {
        try execute(nil, 0)
    }

    private func execute(_ data: UnsafePointer<CChar>?, _ count: Int) throws(HTTP1Error) {
        let parsed = http_parser_execute(parser, settings, data, count)
        let code = pushgate_http_errno(parser)
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
    }
}
