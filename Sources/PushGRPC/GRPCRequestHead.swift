import PushCore
import PushHTTP2

/// What the request headers of a new call say: path, timeout, metadata, and whether it is gRPC at all.
struct GRPCRequestHead {
    private enum Names {
        static let path = Array(":path".utf8)
        static let method = Array(":method".utf8)
        static let scheme = Array(":scheme".utf8)
        static let authority = Array(":authority".utf8)
        static let contentType = Array("content-type".utf8)
        static let timeout = Array("grpc-timeout".utf8)
        static let encoding = Array("grpc-encoding".utf8)
        static let acceptEncoding = Array("grpc-accept-encoding".utf8)
    }

    var path = ""
    /// nil: no `grpc-timeout`; .some(nil): present but invalid.
    var timeout: Duration??
    var metadata: [(name: String, value: String)] = []
    /// `grpc-encoding` and `grpc-accept-encoding` (transport headers, not metadata).
    var compression = GRPCCompression()
    /// An HTTP status for requests that are not gRPC (wrong method or content type).
    var httpRejection: Int?

    init(headers: [HTTP2Header]) {
        var strings = GRPCHeaderStrings()
        self.init(headers: headers, strings: &strings)
    }

    /// - Parameter strings: the connection's strings of repeated header fields.
    init(headers: [HTTP2Header], strings: inout GRPCHeaderStrings) {
        var method = ""
        var contentType = ""
        metadata.reserveCapacity(headers.count)
        for header in headers {
            // By bytes, not by String: the session shares the arrays of the names it knows, so
            // most of these are an identity check (a switch over Strings compared each case).
            let name = header.name
            if name == Names.path {
                path = strings.value(header)
            } else if name == Names.method {
                method = strings.value(header)
            } else if name == Names.scheme || name == Names.authority {
                continue
            } else if name == Names.contentType {
                contentType = strings.value(header)
                metadata.append((strings.name(header), contentType))
            } else if name == Names.timeout {
                timeout = .some(GRPCTimeout.parse(header.valueString))
            } else if name == Names.acceptEncoding {
                compression.acceptsGzip = GRPCCompression.acceptsGzip(header.value)
            } else if name == Names.encoding {
                compression.encoding = GRPCCompression.encoding(named: header.value)
            } else {
                metadata.append((strings.name(header), strings.value(header)))
            }
        }
        if method != "POST" {
            httpRejection = 405
        } else if !contentType.hasPrefix("application/grpc") {
            // PROTOCOL-HTTP2.md: a content type that does not start with application/grpc gets 415.
            httpRejection = 415
        }
    }
}

/// The `String`s of header fields a connection's calls repeat, keyed by the identity of their byte
/// arrays: the HTTP/2 session shares one array for a name from its table and for a value equal to
/// the previous one under that name (``HTTP2Header/isInterned``), so a call's `:path`, content
/// type, user agent and the like come out of here without a new string (several allocations per
/// call). Other fields are decoded each time; a shared one seen for the first time is remembered in
/// place of the oldest.
struct GRPCHeaderStrings {
    private var entries: [(bytes: [UInt8], string: String)] = []
    private var next = 0
    static let capacity = 32

    mutating func name(_ header: HTTP2Header) -> String {
        header.isInterned ? string(header.name) : header.nameString
    }

    mutating func value(_ header: HTTP2Header) -> String {
        header.isInterned ? string(header.value) : header.valueString
    }

    private mutating func string(_ bytes: [UInt8]) -> String {
        let identity = bytes.withUnsafeBufferPointer { $0.baseAddress }
        if identity != nil {
            for entry in entries where entry.bytes.count == bytes.count {
                if entry.bytes.withUnsafeBufferPointer({ $0.baseAddress }) == identity { return entry.string }
            }
        }
        let string = String(decoding: bytes, as: UTF8.self)
        // Kept alive here, an array's address cannot be reused by another while it is an entry.
        if entries.count < Self.capacity {
            entries.append((bytes, string))
        } else {
            entries[next] = (bytes, string)
            next = (next + 1) % Self.capacity
        }
        return string
    }
}
