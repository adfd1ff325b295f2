/// What the session tracks per live stream, keyed by stream id in `HTTP2Session.streams`.
/// A class so nghttp2 callbacks can update it in place without re-hashing into the dictionary
/// and while the delegate (which may touch `streams`) is being called.
final class StreamState {
    /// The header block being received (begun in on_begin_headers, delivered in on_frame_recv).
    var headerBlock: [HTTP2Header] = []
    /// Its size as RFC 9113 counts it (name + value + 32 per field), checked against the limit.
    var headerBlockSize = 0
    /// Where the fields of the block being received go instead of `headerBlock`, if the delegate
    /// asked for them one by one.
    var fieldSink: HTTP2HeaderFieldSink?
    /// The body being sent, if this side's HEADERS were submitted with a data provider. Spelled
    /// `Optional<…>` and set only by the initializers (a `T?` starts as nil, and setting it in
    /// `init` is then an assignment: the nil destroyed through an outlined copy on every stream).
    // swift-format-ignore: UseShorthandTypeNames
    var outbound: Optional<OutboundStream>
    /// The template of the HEADERS submitted on this stream: nghttp2 reads its bytes in place
    /// (``HTTP2HeaderTemplate``) when it packs the frame, so it lives as long as the stream.
    /// (A trailers template is kept by `outbound`.)
    // swift-format-ignore: UseShorthandTypeNames
    var sentHeaders: Optional<HTTP2HeaderTemplate>

    init() {
        outbound = nil
        sentHeaders = nil
    }

    init(outbound: OutboundStream?, headers: HTTP2HeaderTemplate? = nil) {
        self.outbound = outbound
        self.sentHeaders = headers
    }
}
