import CNGHTTP2

// Frames the owner asks for. nghttp2 queues them; they go out on the next drainOutput.
// All of these may be called from inside delegate methods.

extension HTTP2Session {
    // MARK: Server role

    /// Response headers. endStream true = headers-only response (gRPC Trailers-Only, APNs 200).
    /// Otherwise the stream gets a body fed by sendData/sendTrailers.
    public func sendResponseHeaders(streamID: Int32, headers: [HTTP2Header], endStream: Bool) throws(HTTP2Error) {
        try submitResponseHeaders(streamID: streamID, endStream: endStream) { submit in
            headers.withNghttp2NVs { submit($0, $1) }
        }
    }

    /// Submits response headers that `withNVs` lays out as nghttp2 name-value pairs (a header
    /// list or a prepared template), with a body to follow unless `endStream`.
    func submitResponseHeaders(
        streamID: Int32, endStream: Bool,
        _ withNVs: ((UnsafePointer<nghttp2_nv>?, Int) -> Int32) -> Int32
    ) throws(HTTP2Error) {
        guard let state = streams[streamID] else { throw HTTP2Error.streamNotOpen(streamID) }
        let rv: Int32
        if endStream {
            rv = withNVs { nghttp2_submit_response(session, streamID, $0, $1, nil) }
        } else {
            state.outbound = OutboundStream()
            var provider = Self.bodyProvider
            rv = withNVs { nghttp2_submit_response(session, streamID, $0, $1, &provider) }
            if rv < 0 { state.outbound = nil }
        }
        try HTTP2Error.check(rv)
    }

    /// Queues body bytes for a stream whose headers were sent with a body to follow (server
    /// response, or client request with a streaming body). endStream ends the stream after this
    /// chunk. The array is kept as is (shared, not copied) until nghttp2 frames it.
    public func sendData(streamID: Int32, _ bytes: [UInt8], endStream: Bool) throws(HTTP2Error) {
        guard let state = streams[streamID] else { throw HTTP2Error.streamNotOpen(streamID) }
        guard state.outbound.map({ !$0.isFinished }) ?? false else { throw HTTP2Error.noOpenBody(streamID) }
        state.outbound!.append(bytes, endStream: endStream)
        queuedBodyBytes += bytes.count
        try resumeIfDeferred(state, streamID)
    }

    /// Ends the stream with a trailers HEADERS frame after all queued data.
    ///
    /// Always goes through the data provider (EOF + NO_END_STREAM, then nghttp2_submit_trailer
    /// from the read callback), as nghttp2's docs prescribe; calling submit_trailer directly
    /// while a deferred provider is attached would leave the provider dangling. When the queue
    /// was already drained this costs one empty DATA frame before the trailers.
    public func sendTrailers(streamID: Int32, headers: [HTTP2Header]) throws(HTTP2Error) {
        guard let state = streams[streamID] else { throw HTTP2Error.streamNotOpen(streamID) }
        guard state.outbound.map({ !$0.isFinished }) ?? false else { throw HTTP2Error.noOpenBody(streamID) }
        state.outbound!.finish(trailers: headers)
        try resumeIfDeferred(state, streamID)
    }

    /// RST_STREAM. The stream is reported closed (streamDidClose) once the frame is sent.
    public func resetStream(streamID: Int32, errorCode: HTTP2ErrorCode) throws(HTTP2Error) {
        try HTTP2Error.check(
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode.rawValue))
    }

    /// GOAWAY. lastStreamID nil = the last peer stream nghttp2 processed. After it is sent and
    /// the remaining streams finish, wantsRead/wantsWrite turn false.
    public func goAway(errorCode: HTTP2ErrorCode, lastStreamID: Int32? = nil, debugData: [UInt8] = [])
        throws(HTTP2Error)
    {
        let last = lastStreamID ?? nghttp2_session_get_last_proc_stream_id(session)
        try HTTP2Error.check(
            debugData.withUnsafeBufferPointer {
                nghttp2_submit_goaway(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, errorCode.rawValue, $0.baseAddress, $0.count)
            })
    }

    /// Server role: a GOAWAY with the maximum stream id, announcing a graceful shutdown while
    /// still accepting streams in flight; follow with goAway once they are done.
    public func sendShutdownNotice() throws(HTTP2Error) {
        try HTTP2Error.check(nghttp2_submit_shutdown_notice(session))
    }

    /// A new SETTINGS frame mid-connection, e.g. a server raising maxConcurrentStreams after
    /// start-up as APNs does. `connectionWindowSize` is ignored here (it is not a setting);
    /// the header-list limit enforced on received blocks follows `maxHeaderListSize`.
    public func sendSettings(_ settings: HTTP2Settings) throws(HTTP2Error) {
        let entries = settings.entries(for: role)
        try HTTP2Error.check(
            entries.withUnsafeBufferPointer {
                nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress, $0.count)
            })
        headerListLimit = settings.enforcedHeaderListSize
    }

    public func ping() throws(HTTP2Error) {
        try HTTP2Error.check(nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil))
    }

    // MARK: Client role

    /// Submits a request. body nil = END_STREAM on HEADERS. body non-nil = DATA frames with
    /// END_STREAM at the end; the array is shared, not copied by Swift. Returns the stream id.
    /// nghttp2 assigns the id now but holds the HEADERS while remoteMaxConcurrentStreams
    /// streams are open.
    public func submitRequest(headers: [HTTP2Header], body: [UInt8]?) throws(HTTP2Error) -> Int32 {
        try submitRequest(headers: headers, outbound: body.map(OutboundStream.init(body:)))
    }

    /// A request whose body follows via sendData/sendTrailers (streamingBody true), or that has
    /// none (false: END_STREAM on HEADERS).
    public func submitRequest(headers: [HTTP2Header], streamingBody: Bool) throws(HTTP2Error) -> Int32 {
        try submitRequest(headers: headers, outbound: streamingBody ? OutboundStream() : nil)
    }

    private func submitRequest(headers: [HTTP2Header], outbound: OutboundStream?) throws(HTTP2Error) -> Int32 {
        let streamID: Int32
        if outbound != nil {
            var provider = Self.bodyProvider
            streamID = headers.withNghttp2NVs { nghttp2_submit_request(session, nil, $0, $1, &provider, nil) }
        } else {
            streamID = headers.withNghttp2NVs { nghttp2_submit_request(session, nil, $0, $1, nil, nil) }
        }
        try HTTP2Error.check(streamID)
        // Safe to register after submitting: nghttp2 reads the body only inside mem_send.
        streams[streamID] = StreamState(outbound: outbound)
        queuedBodyBytes += outbound?.queuedBytes ?? 0
        return streamID
    }

    // MARK: Internals

    private func resumeIfDeferred(_ state: StreamState, _ streamID: Int32) throws(HTTP2Error) {
        guard state.outbound!.deferred else { return }
        state.outbound!.deferred = false
        try HTTP2Error.check(nghttp2_session_resume_data(session, streamID))
    }
}
