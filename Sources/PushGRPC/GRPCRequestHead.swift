import PushCore
import PushHTTP2

/// What the request headers of a new call say: path, timeout, metadata, and whether it is gRPC at
/// all. Read from the header block as it arrives (``GRPCRequestHeadReader``).
struct GRPCRequestHead {
    var path = ""
    /// nil: no `grpc-timeout`; .some(nil): present but invalid.
    var timeout: Duration??
    var metadata: [(name: String, value: String)] = []
    /// `grpc-encoding` and `grpc-accept-encoding` (transport headers, not metadata).
    var compression = GRPCCompression()
    /// An HTTP status for requests that are not gRPC (wrong method or content type).
    var httpRejection: Int?
    /// The first `x-request-id` (also in the metadata).
    var requestID: String?
    /// The method `path` names, when the head was read with a router.
    var route: GRPCRoute?

    init() {}

    /// The head of a block given as a whole (tests; a session without field sinks).
    init(headers: [HTTP2Header], router: GRPCRouter? = nil) {
        let reader = GRPCRequestHeadReader()
        reader.read(headers, streamID: 0)
        self = reader.head(router: router)
    }
}
