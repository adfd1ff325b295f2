public import PushCore

/// The Connect protocol's wire rules (connectrpc.com/docs/protocol), without I/O: what a request's
/// head asks for, error bodies and their HTTP statuses, envelopes and the end of a stream.
enum ConnectProtocol {
    /// How the messages of a call are written.
    enum Codec: Equatable, Sendable {
        /// Binary protobuf (`application/proto`, `application/connect+proto`).
        case proto
        /// The proto3 JSON mapping (`application/json`, `application/connect+json`).
        case json

        var name: String { self == .proto ? "proto" : "json" }
    }

    /// Unary calls carry bare messages; streaming calls carry envelopes and end with an
    /// end-of-stream message.
    enum Shape: Equatable, Sendable {
        case unary
        case streaming
    }

    /// The envelope flag of a compressed message.
    static let compressedFlag: UInt8 = 0x01
    /// The envelope flag of the end-of-stream message (not gRPC-Web's 0x80).
    static let endStreamFlag: UInt8 = 0x02

    /// The content type a request's `Content-Type` names (parameters such as `charset` ignored),
    /// or nil for one that is not Connect's.
    static func contentType(_ value: String) -> (shape: Shape, codec: Codec)? {
        var mediaType = value.utf8.prefix { $0 != UInt8(ascii: ";") }
        while let last = mediaType.last, last == 0x20 || last == 0x09 { mediaType = mediaType.dropLast() }
        while let first = mediaType.first, first == 0x20 || first == 0x09 { mediaType = mediaType.dropFirst() }
        switch String(decoding: mediaType, as: UTF8.self).lowercased() {
        case "application/json": return (.unary, .json)
        case "application/proto": return (.unary, .proto)
        case "application/connect+json": return (.streaming, .json)
        case "application/connect+proto": return (.streaming, .proto)
        default: return nil
        }
    }

    static func responseContentType(_ shape: Shape, _ codec: Codec) -> String {
        shape == .unary ? "application/\(codec.name)" : "application/connect+\(codec.name)"
    }

    /// `Connect-Timeout-Ms`: a positive integer of at most 10 digits; nil for anything else.
    static func timeout(_ value: String) -> Duration? {
        let utf8 = value.utf8
        guard (1...10).contains(utf8.count) else { return nil }
        var milliseconds: Int64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            milliseconds = milliseconds * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return milliseconds > 0 ? .milliseconds(milliseconds) : nil
    }

    /// Connect's name of a code (`invalid_argument`; `canceled` with one L, as the spec spells it).
    static func codeName(_ code: GRPCStatusCode) -> String {
        code == .cancelled ? "canceled" : code.name.lowercased()
    }

    /// The HTTP status of a unary error with `code` (the spec's table "Error Codes").
    static func httpStatus(_ code: GRPCStatusCode) -> Int {
        switch code {
        case .ok: 200
        case .cancelled: 499
        case .unknown, .internalError, .dataLoss: 500
        case .invalidArgument, .failedPrecondition, .outOfRange: 400
        case .deadlineExceeded: 504
        case .notFound: 404
        case .alreadyExists, .aborted: 409
        case .permissionDenied: 403
        case .resourceExhausted: 429
        case .unimplemented: 501
        case .unavailable: 503
        case .unauthenticated: 401
        }
    }

    /// Messages longer than this are cut in error bodies (they may echo a long input).
    static let maxErrorMessageBytes = 4096

    /// An Error: `{"code":"invalid_argument","message":"…"}` (the message left out when empty).
    static func writeError(_ status: GRPCStatus, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("code")
        writer.string(codeName(status.code == .ok ? .unknown : status.code))
        writer.member("message", nonEmpty: TextCap.prefix(status.message, maxBytes: maxErrorMessageBytes))
        writer.endObject()
    }

    /// The body of a failed unary call.
    static func errorBody(_ status: GRPCStatus) -> [UInt8] {
        var writer = JSONWriter()
        writeError(status, to: &writer)
        return writer.bytes
    }

    /// The end-of-stream message: `{}` after success, `{"error":{…}}` after a failure.
    static func endStream(_ status: GRPCStatus) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        if status.code != .ok {
            writer.key("error")
            writeError(status, to: &writer)
        }
        writer.endObject()
        return envelope(writer.bytes, flags: endStreamFlag)
    }

    /// One enveloped message: flags, a 4-byte big-endian length, the message.
    static func envelope(_ message: [UInt8], flags: UInt8 = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(5 + message.count)
        let length = UInt32(truncatingIfNeeded: message.count)
        bytes.append(flags)
        bytes.append(UInt8(length >> 24))
        bytes.append(UInt8((length >> 16) & 0xff))
        bytes.append(UInt8((length >> 8) & 0xff))
        bytes.append(UInt8(length & 0xff))
        bytes.append(contentsOf: message)
        return bytes
    }
}

/// What the head of a Connect request asks for, or why it is refused: read from the method,
/// path and headers alone, before any of its body is kept.
struct ConnectRequestHead: Sendable {
    var path = ""
    var shape = ConnectProtocol.Shape.unary
    var codec = ConnectProtocol.Codec.json
    /// From `Connect-Timeout-Ms`; nil: none.
    var timeout: Duration?
    /// `Content-Encoding` (unary) or `Connect-Content-Encoding` (streaming), and whether the
    /// client takes gzip answers (`Accept-Encoding` / `Connect-Accept-Encoding`).
    var compression = GRPCCompression()
    /// Every header but the ones the protocol itself reads, for the handler (`authorization`,
    /// `x-request-id`, custom metadata).
    var metadata: [(name: String, value: String)] = []

    /// A request the protocol refuses before any method runs: the HTTP status to answer, and the
    /// error for the body.
    struct Refusal: Error, Sendable {
        let httpStatus: Int
        let status: GRPCStatus
    }

    /// Reads a request head. `headers` have lowercase names (both HTTP versions give them so).
    init(method: String, path: String, headers: [(name: String, value: String)]) throws(Refusal) {
        self.path = path
        guard method == "POST" else {
            // GET for side-effect-free methods is optional in the protocol; no method of ours is
            // marked so, and every call is a POST.
            throw Refusal(httpStatus: 405, status: GRPCStatus(.unimplemented, "Connect calls are POST requests"))
        }
        var contentType: String?
        var encoding: String?
        var acceptEncoding: String?
        var streamingEncoding: String?
        var streamingAcceptEncoding: String?
        var version: String?
        var timeoutValue: String?
        metadata.reserveCapacity(headers.count)
        for (name, value) in headers {
            switch name {
            case "content-type": contentType = value
            case "content-encoding": encoding = value
            case "accept-encoding": acceptEncoding = value
            case "connect-content-encoding": streamingEncoding = value
            case "connect-accept-encoding": streamingAcceptEncoding = value
            case "connect-protocol-version": version = value
            case "connect-timeout-ms": timeoutValue = value
            case "content-length", "transfer-encoding", "connection", "keep-alive", "te", "upgrade", "host": continue
            default: metadata.append((name, value))
            }
        }
        guard let contentType, let (shape, codec) = ConnectProtocol.contentType(contentType) else {
            let shown = contentType.map { TextCap.quoted($0) } ?? "none"
            throw Refusal(
                httpStatus: 415,
                status: GRPCStatus(
                    .unimplemented,
                    "content type \(shown) is not served here: use application/json or application/proto "
                        + "(Connect unary), application/connect+json or application/connect+proto (Connect "
                        + "streaming), or application/grpc (gRPC over HTTP/2)"))
        }
        self.shape = shape
        self.codec = codec
        if let version, version != "1" {
            throw Refusal(
                httpStatus: 400,
                status: GRPCStatus(
                    .invalidArgument, "connect-protocol-version \(TextCap.quoted(version)): only 1 is supported"))
        }
        if let timeoutValue {
            guard let timeout = ConnectProtocol.timeout(timeoutValue) else {
                throw Refusal(
                    httpStatus: 400,
                    status: GRPCStatus(
                        .invalidArgument,
                        "connect-timeout-ms \(TextCap.quoted(timeoutValue)): not a positive integer of at most 10 digits"
                    ))
            }
            self.timeout = timeout
        }
        let encodingHeader = shape == .unary ? "content-encoding" : "connect-content-encoding"
        let given = shape == .unary ? encoding : streamingEncoding
        compression.encoding = GRPCCompression.encoding(named: Array((given ?? "").utf8))
        if case .unsupported(let name) = compression.encoding {
            throw Refusal(
                httpStatus: ConnectProtocol.httpStatus(.unimplemented),
                status: GRPCStatus(
                    .unimplemented,
                    "\(encodingHeader) \(TextCap.quoted(name)) is not supported; supported: gzip, identity"))
        }
        if let accepted = shape == .unary ? acceptEncoding : streamingAcceptEncoding {
            compression.acceptsGzip = GRPCCompression.acceptsGzip(Array(accepted.utf8))
        } else {
            // The spec: without an accept header the client takes the encoding it sent.
            compression.acceptsGzip = compression.encoding == .gzip
        }
    }
}

extension GRPCStatusCode {
    /// The HTTP status a plain HTTP endpoint answers for this code: Connect's table, so both
    /// doors of the port agree (`invalid_argument` 400, `unauthenticated` 401, …).
    public var httpStatus: Int { ConnectProtocol.httpStatus(self) }
}
