/// Receives a session's events. All methods are called synchronously from inside
/// `HTTP2Session.receive(_:)` or `drainOutput(into:maxBytes:)`, on the session's thread.
///
/// Implementations may call the session's submit/send/reset/goAway methods from inside any of
/// these (nghttp2 allows submissions from its callbacks); they must not call `receive` or
/// `drainOutput` re-entrantly (those throw `NGHTTP2_ERR_INVALID_STATE` if they do).
///
/// A class to subclass, not a protocol (as ``HTTP2HeaderFieldSink``): the session calls it through
/// a reference it holds for the whole `receive` or `drainOutput`, with no retain and release
/// around each event, which a protocol existential in a stored property would need. Each method
/// does nothing here.
open class HTTP2SessionDelegate {
    public init() {}

    /// A complete header block (request/response headers, or trailers) for a stream.
    /// endStream: the frame carried END_STREAM.
    open func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {}

    /// A DATA chunk (valid only during the call). Called with an empty buffer and endStream true
    /// when a DATA frame carried END_STREAM; non-empty chunks always come with endStream false.
    open func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {}

    /// The stream is closed (both sides done, or reset by either peer). errorCode is the
    /// RST_STREAM code (noError for a normal close). Also called with refusedStream for a client
    /// request nghttp2 never sent, so it is safe to retry elsewhere: after a GOAWAY, requests
    /// still held for a free stream slot are dropped when nghttp2 next tries to send them (once a
    /// slot frees up), not when the GOAWAY arrives. A server may see this for streams whose
    /// headers it never received (e.g. refused for an oversized header block).
    open func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {}

    /// The peer's SETTINGS were applied (client role re-reads remoteMaxConcurrentStreams).
    open func http2SessionDidReceiveSettings(_ session: HTTP2Session) {}

    /// GOAWAY from the peer. Streams above lastStreamID are then closed with refusedStream.
    open func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {}

    /// A header block begins on `streamID`. Return a sink to take its fields one by one as they
    /// are decoded (nothing is copied or collected for them, and `didReceiveHeaders` then comes
    /// with an empty list), or nil (here) for the whole block as `[HTTP2Header]`. For peers that
    /// look at a few fields of every request and can do so in place (the mocks).
    open func http2Session(_ session: HTTP2Session, headerFieldSinkForStream streamID: Int32) -> HTTP2HeaderFieldSink? {
        nil
    }

    /// Server role: a frame of `streamID` (its response HEADERS, DATA or trailers) could not be
    /// sent; the session has reset the stream (INTERNAL_ERROR), and streamDidClose follows.
    open func http2Session(_ session: HTTP2Session, didNotSendFrameOnStream streamID: Int32, error: HTTP2Error) {}

    /// A frame that carries neither headers nor body bytes arrived (WINDOW_UPDATE, PRIORITY, PING,
    /// SETTINGS, RST_STREAM, an empty DATA frame without END_STREAM): cheap for the peer to send by
    /// the million, and nghttp2 counts only those that make it answer, so an owner may count them.
    open func http2SessionDidReceiveControlFrame(_ session: HTTP2Session) {}
}
