import CNGHTTP2

/// The settings this endpoint advertises to its peer in its SETTINGS frame, plus the
/// connection-level receive window (which HTTP/2 advertises with WINDOW_UPDATE, not SETTINGS).
public struct HTTP2Settings: Sendable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: how many streams the peer may open towards us.
    /// nil = unlimited (the setting is not sent).
    public var maxConcurrentStreams: UInt32?
    /// SETTINGS_INITIAL_WINDOW_SIZE: per-stream receive window. Bodies are delivered to the
    /// delegate synchronously and nghttp2 re-opens the window automatically as they are, so a
    /// large window costs no buffering here; it only lets a peer stream faster.
    public var initialWindowSize: UInt32
    /// SETTINGS_MAX_FRAME_SIZE (16384 is the protocol minimum and default).
    public var maxFrameSize: UInt32
    /// SETTINGS_MAX_HEADER_LIST_SIZE. nghttp2 advertises it but does not enforce it, so the
    /// session does: a header block larger than this (nil = 64 KiB) resets its stream with
    /// ENHANCE_YOUR_CALM (which gRPC maps to RESOURCE_EXHAUSTED) before the delegate sees it.
    public var maxHeaderListSize: UInt32?
    /// The connection-level receive window, raised from the protocol's 65535 right after the
    /// SETTINGS frame. Without this, many concurrent streams share 64 KiB and stall each other.
    public var connectionWindowSize: UInt32
    /// The owner returns received DATA bytes to the flow-control windows itself
    /// (``HTTP2Session/consume(streamID:bytes:)``, ``HTTP2Session/consumeConnection(bytes:)``)
    /// instead of nghttp2 doing so as soon as it has delivered them: a server that stops
    /// returning a stream's bytes stops that client from sending more on it (backpressure for a
    /// handler that reads its requests slower than they come). Padding and DATA on closed streams
    /// are still returned by nghttp2 itself. Default false.
    public var manualFlowControl = false
    /// SETTINGS_NO_RFC7540_PRIORITIES = 1 (RFC 9218): the peer's RFC 7540 priority signals are
    /// ignored, and nghttp2 schedules streams without its dependency tree, so no stream is placed
    /// in one or kept in it once closed. The gRPC server sets it (gRPC clients send no
    /// priorities). Clients leave it off: RFC 9113 has servers ignore settings they do not know,
    /// but what APNs, FCM and ADM do with it cannot be checked from here. Default false.
    public var noRFC7540Priorities = false

    public init(
        maxConcurrentStreams: UInt32? = nil,
        initialWindowSize: UInt32 = 65_535,
        maxFrameSize: UInt32 = 16_384,
        maxHeaderListSize: UInt32? = nil,
        connectionWindowSize: UInt32 = 65_535
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.initialWindowSize = initialWindowSize
        self.maxFrameSize = maxFrameSize
        self.maxHeaderListSize = maxHeaderListSize
        self.connectionWindowSize = connectionWindowSize
    }

    /// A gRPC/APNs-mock server: up to 1000 concurrent streams (what APNs itself allows once
    /// warmed up), 1 MiB per stream and 16 MiB per connection, 16 KiB of headers.
    public static var serverDefaults: Self {
        Self(
            maxConcurrentStreams: 1000, initialWindowSize: 1 << 20, maxFrameSize: 16_384,
            maxHeaderListSize: 16 << 10, connectionWindowSize: 16 << 20)
    }

    /// A client (APNs or gRPC): server push is always disabled by the session, so no stream
    /// limit is advertised; 1 MiB per stream and 16 MiB per connection for responses.
    public static var clientDefaults: Self {
        Self(
            maxConcurrentStreams: nil, initialWindowSize: 1 << 20, maxFrameSize: 16_384,
            maxHeaderListSize: 64 << 10, connectionWindowSize: 16 << 20)
    }

    /// The header-list limit actually enforced on received header blocks.
    var enforcedHeaderListSize: Int { Int(maxHeaderListSize ?? 64 << 10) }

    /// SETTINGS entries for the initial SETTINGS frame.
    func entries(for role: HTTP2Session.Role) -> [nghttp2_settings_entry] {
        var entries: [nghttp2_settings_entry] = []
        func add(_ id: nghttp2_settings_id, _ value: UInt32) {
            entries.append(nghttp2_settings_entry(settings_id: Int32(id.rawValue), value: value))
        }
        if role == .client { add(NGHTTP2_SETTINGS_ENABLE_PUSH, 0) }
        if let maxConcurrentStreams { add(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, maxConcurrentStreams) }
        add(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, initialWindowSize)
        add(NGHTTP2_SETTINGS_MAX_FRAME_SIZE, maxFrameSize)
        if let maxHeaderListSize { add(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, maxHeaderListSize) }
        if noRFC7540Priorities { add(NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1) }
        return entries
    }
}
