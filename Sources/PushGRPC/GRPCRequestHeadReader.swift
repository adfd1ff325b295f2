import PushCore
import PushHTTP2

#if canImport(Glibc)
    import Glibc
#endif

/// Takes the header blocks of a connection's requests field by field as nghttp2 decodes them (the
/// session's field sink), and gives a new stream's request as a ``GRPCRequestHead`` (a gRPC call)
/// or as `[HTTP2Header]` (a Connect call or route).
///
/// One per connection: HTTP/2 never interleaves two header blocks, and ``begin(streamID:)`` starts
/// each afresh. A block is kept as fields by their place in it, and a client's calls send the same
/// fields in the same order, so a field is first compared (`memcmp`) with the one at its place in
/// the previous block: when equal, what was made of it then (its strings, the parsed timeout, the
/// encoding, the route of a `:path`) is used again, and when the whole metadata is unchanged so is
/// its array. A gRPC call whose header block repeats the previous one allocates nothing here.
final class GRPCRequestHeadReader: HTTP2HeaderFieldSink {
    /// What a field means to a call, decided by its name when it first arrives at its place.
    enum Kind: Equatable {
        case path
        case method
        /// `:scheme`, `:authority`: neither read nor metadata.
        case ignored
        /// Read, and metadata too.
        case contentType
        case requestID
        case timeout
        case encoding
        case acceptEncoding
        /// Metadata only.
        case metadata

        var isMetadata: Bool { self == .contentType || self == .requestID || self == .metadata }
    }

    private enum Names {
        static let path = Array(":path".utf8)
        static let method = Array(":method".utf8)
        static let scheme = Array(":scheme".utf8)
        static let authority = Array(":authority".utf8)
        static let contentType = Array("content-type".utf8)
        static let timeout = Array("grpc-timeout".utf8)
        static let encoding = Array("grpc-encoding".utf8)
        static let acceptEncoding = Array("grpc-accept-encoding".utf8)
        static let requestID = Array("x-request-id".utf8)
        static let grpcContentType = Array("application/grpc".utf8)
    }

    /// One field at its place, with what was made of it.
    struct Field {
        var name: [UInt8]
        var value: [UInt8]
        var neverIndexed: Bool
        var kind: Kind
        /// The name and value as strings, for the kinds that need them (metadata, `:path`).
        var nameString = ""
        var valueString = ""
        /// `:method` is POST; a content type that starts with `application/grpc` as bytes (what
        /// tells a gRPC request from a Connect one) and as a string (what refuses it with 415).
        var isPost = false
        var isGRPCBytes = false
        var isGRPCString = false
        var timeout: Duration?
        var encoding = GRPCCompression.Encoding.identity
        var acceptsGzip = false
        /// The `:path`'s route, looked up once (``routeLooked``).
        var route: GRPCRoute?
        var routeLooked = false
        /// nghttp2's buffers of the name and value, kept once the field repeated: a client's
        /// indexed fields come in the same buffers every time, known without comparing bytes.
        var kept: HTTP2KeptField?

        init(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
            self.name = Array(name)
            self.value = Array(value)
            self.neverIndexed = neverIndexed
            if name.equals(Names.path) {
                kind = .path
                valueString = String(decoding: value, as: UTF8.self)
            } else if name.equals(Names.method) {
                kind = .method
                isPost = String(decoding: value, as: UTF8.self) == "POST"
            } else if name.equals(Names.scheme) || name.equals(Names.authority) {
                kind = .ignored
            } else if name.equals(Names.contentType) {
                kind = .contentType
                isGRPCBytes = value.starts(with: Names.grpcContentType)
            } else if name.equals(Names.timeout) {
                kind = .timeout
                timeout = GRPCTimeout.parse(String(decoding: value, as: UTF8.self))
            } else if name.equals(Names.acceptEncoding) {
                kind = .acceptEncoding
                acceptsGzip = GRPCCompression.acceptsGzip(self.value)
            } else if name.equals(Names.encoding) {
                kind = .encoding
                encoding = GRPCCompression.encoding(named: self.value)
            } else {
                kind = name.equals(Names.requestID) ? .requestID : .metadata
            }
            if kind.isMetadata {
                nameString = String(decoding: name, as: UTF8.self)
                valueString = String(decoding: value, as: UTF8.self)
                if kind == .contentType { isGRPCString = valueString.hasPrefix("application/grpc") }
            }
        }
    }

    /// The places kept between blocks; a longer block's fields past them are made anew each time
    /// (a connection does not keep a big block's fields for its whole life).
    static let keptFields = 64

    private var fields: [Field] = []
    /// Fields of the block being read (of the last one, once it is complete).
    private(set) var count = 0
    /// The stream whose block this is.
    private(set) var streamID: Int32 = 0
    /// The metadata of the last block built into a head, and the block's field count then;
    /// `metadataChanged`: a field of the metadata differs from it.
    private var metadata: [(name: String, value: String)] = []
    private var metadataFieldCount = -1
    private var metadataChanged = true

    override init() {}

    /// A header block begins on `streamID`.
    func begin(streamID: Int32) {
        self.streamID = streamID
        if fields.count > Self.keptFields {
            fields.removeLast(fields.count - Self.keptFields)
            metadataChanged = true
        }
        if count != metadataFieldCount { metadataChanged = true }
        count = 0
    }

    override func headerField(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) {
        _ = take(name: name, value: value, neverIndexed: neverIndexed)
    }

    override func headerField(_ name: HTTP2FieldBuffer, _ value: HTTP2FieldBuffer, neverIndexed: Bool) {
        let index = count
        if index < fields.count {
            // The buffers kept at this place: the same field, without a memcmp of either part
            // (and, nearly always, the same flag: then nothing is written).
            let same = fields.withUnsafeBufferPointer { fields in
                guard let kept = fields[index].kept, kept.isSame(name: name, value: value) else { return false }
                return fields[index].neverIndexed == neverIndexed
            }
            if same {
                count = index + 1
                return
            }
        }
        // Kept when a field repeats byte for byte (an indexed one comes in the same buffers from
        // then on); one that changes every time (a request id) is never kept.
        if take(name: name.bytes, value: value.bytes, neverIndexed: neverIndexed), fields[index].kept == nil {
            fields[index].kept = HTTP2KeptField(name: name, value: value)
        }
    }

    /// Takes the next field by its bytes; true when it equals the one at its place last time.
    private func take(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool) -> Bool {
        let index = count
        count += 1
        if index < fields.count {
            // Read in place (no uniqueness check, no copy of the field); written only on a change.
            let same = fields.withUnsafeBufferPointer { fields in
                fields[index].name.count == name.count && fields[index].value.count == value.count
                    && Self.equal(fields[index].name, name) && Self.equal(fields[index].value, value)
            }
            if same {
                if fields[index].neverIndexed != neverIndexed { fields[index].neverIndexed = neverIndexed }
                return true
            }
            if fields[index].kind.isMetadata { metadataChanged = true }
            fields[index] = Field(name: name, value: value, neverIndexed: neverIndexed)
        } else {
            fields.append(Field(name: name, value: value, neverIndexed: neverIndexed))
        }
        if fields[index].kind.isMetadata { metadataChanged = true }
        return false
    }

    /// Lets go of nghttp2's buffers (on the connection's loop, when its session closes: their
    /// reference counts are the session's, not atomic).
    func releaseKeptBuffers() {
        for index in fields.indices where fields[index].kept != nil { fields[index].kept = nil }
    }

    @inline(__always)
    private static func equal(_ array: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
        return array.withUnsafeBufferPointer { memcmp($0.baseAddress!, base, bytes.count) == 0 }
    }

    /// Whether the request's (first) content type is gRPC's (`application/grpc`, `application/grpc+proto`…).
    var isGRPC: Bool {
        for index in 0..<count where fields[index].kind == .contentType { return fields[index].isGRPCBytes }
        return false
    }

    /// The block as fields, for a request that is not gRPC.
    var headers: [HTTP2Header] {
        fields[0..<count].map { HTTP2Header(name: $0.name, value: $0.value, indexable: !$0.neverIndexed) }
    }

    /// The block as a call's head; with `router`, its `:path`'s route too.
    func head(router: GRPCRouter?) -> GRPCRequestHead {
        var isPost = false
        var isGRPCContentType = false
        var pathIndex: Int?
        var requestID: String?
        var timeout: Duration??
        var compression = GRPCCompression()
        let rebuildMetadata = metadataChanged || count != metadataFieldCount
        if rebuildMetadata { metadata = [] }
        // Through the buffer: a field is read in place, not copied out (a retain per string).
        fields.withUnsafeBufferPointer { fields in
            for index in 0..<count {
                switch fields[index].kind {
                case .path:
                    pathIndex = index
                case .method:
                    isPost = fields[index].isPost
                case .ignored:
                    continue
                case .contentType:
                    isGRPCContentType = fields[index].isGRPCString
                case .requestID:
                    if requestID == nil { requestID = fields[index].valueString }
                case .timeout:
                    timeout = .some(fields[index].timeout)
                case .acceptEncoding:
                    compression.acceptsGzip = fields[index].acceptsGzip
                case .encoding:
                    compression.encoding = fields[index].encoding
                case .metadata:
                    break
                }
                if rebuildMetadata, fields[index].kind.isMetadata {
                    metadata.append((fields[index].nameString, fields[index].valueString))
                }
            }
        }
        if rebuildMetadata {
            metadataFieldCount = count
            metadataChanged = false
        }
        var path = ""
        var route: GRPCRoute?
        if let pathIndex {
            path = fields[pathIndex].valueString
            if let router {
                if !fields[pathIndex].routeLooked {
                    fields[pathIndex].route = router.route(forPath: path)
                    fields[pathIndex].routeLooked = true
                }
                route = fields[pathIndex].route
            }
        }
        // PROTOCOL-HTTP2.md: a content type that does not start with application/grpc gets 415.
        let httpRejection: Int? = !isPost ? 405 : !isGRPCContentType ? 415 : nil
        // Made once, here, with every field (see the initializer for why).
        return GRPCRequestHead(
            path: path, timeout: timeout, metadata: metadata, compression: compression, httpRejection: httpRejection,
            requestID: requestID, route: route)
    }
}

extension GRPCRequestHeadReader {
    /// Reads a block given as a whole, as if its fields had arrived one by one.
    func read(_ headers: [HTTP2Header], streamID: Int32) {
        begin(streamID: streamID)
        for header in headers {
            header.name.withUnsafeBufferPointer { name in
                header.value.withUnsafeBufferPointer { value in
                    headerField(name: name, value: value, neverIndexed: !header.indexable)
                }
            }
        }
    }
}
