import PushHTTP2

/// Header blocks that every response shares.
enum GRPCHeaders {
    /// `:status 200` plus the content type; gRPC puts outcomes in trailers, never in `:status`.
    /// Only identity is accepted, so clients do not compress (no zlib among Pushgate's libraries).
    static let responseHeaders: [HTTP2Header] = [
        HTTP2Header(":status", "200"),
        HTTP2Header("content-type", "application/grpc"),
        HTTP2Header("grpc-accept-encoding", "identity"),
    ]

    /// ``responseHeaders`` prepared for nghttp2 once (no header array per call).
    static let responseHeadersTemplate = HTTP2HeaderTemplate(responseHeaders)
}
