import CNGHTTP2

/// A failure reported by nghttp2 (or by this module, using nghttp2's error codes).
///
/// `code` is one of nghttp2's negative `NGHTTP2_ERR_*` values, so callers can match on it
/// without this module inventing a parallel taxonomy; `message` is for humans only.
public struct HTTP2Error: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// Maps an nghttp2 return code to an error, taking the text from `nghttp2_strerror`.
    /// This is the single place nghttp2's codes become Swift errors.
    init(nghttp2 code: Int32) {
        self.init(code: code, message: String(cString: nghttp2_strerror(code)))
    }

    init(nghttp2 code: nghttp2_error) {
        self.init(nghttp2: code.rawValue)
    }

    /// The session is not tracking this stream (never opened here, or already closed).
    static func streamNotOpen(_ streamID: Int32) -> HTTP2Error {
        HTTP2Error(code: NGHTTP2_ERR_STREAM_CLOSED.rawValue, message: "stream \(streamID) is not open")
    }

    /// Data or trailers for a stream whose outgoing side has no body open (headers-only, or
    /// already ended with endStream/trailers).
    static func noOpenBody(_ streamID: Int32) -> HTTP2Error {
        HTTP2Error(code: NGHTTP2_ERR_INVALID_STATE.rawValue, message: "stream \(streamID) has no open outgoing body")
    }

    public var description: String { "HTTP2Error(\(code)): \(message)" }

    /// Throws when `rv` is negative (nghttp2's convention for failure).
    @inline(__always)
    static func check(_ rv: Int32) throws(HTTP2Error) {
        if rv < 0 { throw HTTP2Error(nghttp2: rv) }
    }
}
