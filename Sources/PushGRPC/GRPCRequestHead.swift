import PushCore
import PushHTTP2

/// What the request headers of a new call say: path, timeout, metadata, and whether it is gRPC at
/// all. Read from the header block as it arrives (``GRPCRequestHeadReader``).
struct GRPCRequestHead {
    var path: String
    /// nil: no `grpc-timeout`; .some(nil): present but invalid.
    // swift-format-ignore: UseShorthandTypeNames
    var timeout: Optional<Duration?>
    var metadata: [(name: String, value: String)]
    /// `grpc-encoding` and `grpc-accept-encoding` (transport headers, not metadata).
    var compression: GRPCCompression
    /// An HTTP status for requests that are not gRPC (wrong method or content type).
    // swift-format-ignore: UseShorthandTypeNames
    var httpRejection: Optional<Int>
    /// The first `x-request-id` (also in the metadata).
    // swift-format-ignore: UseShorthandTypeNames
    var requestID: Optional<String>
    /// The method `path` names, when the head was read with a router.
    // swift-format-ignore: UseShorthandTypeNames
    var route: Optional<GRPCRoute>

    /// Every field set here, none with an initial value (optionals spelled `Optional<…>`, which
    /// start with none): with initial values the stores were assignments, and the head was built
    /// aside and copied out, a retain and a release per field, for every call.
    init(
        path: String, timeout: Duration??, metadata: [(name: String, value: String)], compression: GRPCCompression,
        httpRejection: Int?, requestID: String?, route: GRPCRoute?
    ) {
        self.path = path
        self.timeout = timeout
        self.metadata = metadata
        self.compression = compression
        self.httpRejection = httpRejection
        self.requestID = requestID
        self.route = route
    }

    /// The head of a block given as a whole (tests; a session without field sinks).
    init(headers: [HTTP2Header], router: GRPCRouter? = nil) {
        let reader = GRPCRequestHeadReader()
        reader.read(headers, streamID: 0)
        self = reader.head(router: router)
    }
}
