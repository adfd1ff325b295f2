import PushHTTP2

/// Header blocks that every response shares.
enum GRPCHeaders {
    /// `:status 200` plus the content type; gRPC puts outcomes in trailers, never in `:status`.
    /// `grpc-accept-encoding` tells clients they may send gzip (identity is implied).
    static let responseHeaders: [HTTP2Header] = [
        HTTP2Header(":status", "200"),
        HTTP2Header("content-type", "application/grpc"),
        HTTP2Header("grpc-accept-encoding", GRPCCompression.acceptedEncodings),
    ]

    /// ``responseHeaders`` prepared for nghttp2 once (no header array per call).
    static let responseHeadersTemplate = HTTP2HeaderTemplate(responseHeaders)

    /// For a client that accepts gzip: its answers' messages may be compressed (each says so in
    /// its flag; small ones are not).
    static let gzipResponseHeadersTemplate = HTTP2HeaderTemplate(
        responseHeaders + [HTTP2Header("grpc-encoding", "gzip")])
}
