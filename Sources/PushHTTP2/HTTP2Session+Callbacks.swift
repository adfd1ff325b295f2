import CNGHTTP2

// The C edge. Each callback is a non-capturing closure (so it converts to a C function
// pointer) whose only jobs are to recover the session from nghttp2's user data, call one Swift
// method, and turn a thrown error into NGHTTP2_ERR_CALLBACK_FAILURE.

extension HTTP2Session {
    static func installCallbacks(_ callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
            dispatch(userData) { (session) throws(HTTP2Error) in
                session.onBeginHeaders(
                    streamID: frame!.pointee.hd.stream_id,
                    opensStream: frame!.pointee.headers.cat == NGHTTP2_HCAT_REQUEST)
                return 0
            }
        }
        // The buffer form: a sink that keeps fields between blocks can tell an HPACK-indexed field
        // by its buffer (``HTTP2FieldBuffer``).
        nghttp2_session_callbacks_set_on_header_callback2(callbacks) { _, frame, name, value, flags, userData in
            dispatch(userData) { (session) throws(HTTP2Error) in
                try session.onHeader(
                    streamID: frame!.pointee.hd.stream_id, name: HTTP2FieldBuffer(name!),
                    value: HTTP2FieldBuffer(value!), flags: flags)
            }
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
            dispatch(userData) { (session) throws(HTTP2Error) in
                session.onFrameReceived(frame!)
                return 0
            }
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, userData in
            dispatch(userData) { (session) throws(HTTP2Error) in
                session.onDataChunk(streamID: streamID, UnsafeRawBufferPointer(start: data, count: length))
                return 0
            }
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, userData in
            dispatch(userData) { (session) throws(HTTP2Error) in
                session.onStreamClose(streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: errorCode))
                return 0
            }
        }
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks) { _, frame, libraryError, userData in
            dispatch(userData) { (session) throws(HTTP2Error) in
                session.onFrameNotSent(frame!, libraryError: libraryError)
                return 0
            }
        }
    }

    /// A data provider whose source is the stream's `OutboundStream` (found by stream id, so
    /// the provider itself carries no pointer).
    static var bodyProvider: nghttp2_data_provider {
        nghttp2_data_provider(source: nghttp2_data_source(ptr: nil)) {
            _, streamID, buffer, length, flags, _, userData in
            let session = Unmanaged<HTTP2Session>.fromOpaque(userData!).takeUnretainedValue()
            return session.readBody(
                streamID: streamID, into: UnsafeMutableRawBufferPointer(start: buffer, count: length), flags: flags!)
        }
    }
}

@inline(__always)
private func dispatch(
    _ userData: UnsafeMutableRawPointer?, _ handler: (HTTP2Session) throws(HTTP2Error) -> Int32
) -> Int32 {
    // Without a retain and release per callback (about ten a Send): the session outlives every
    // nghttp2 call it makes (receive and drainOutput keep it alive across them).
    Unmanaged<HTTP2Session>.fromOpaque(userData!)._withUnsafeGuaranteedRef { session in
        do throws(HTTP2Error) {
            return try handler(session)
        } catch {
            session.callbackError = error
            return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue
        }
    }
}
