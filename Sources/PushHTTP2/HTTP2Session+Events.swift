import CNGHTTP2

// Swift handlers for nghttp2's callbacks: keep per-stream state and forward events to the
// delegate. Delegate calls happen with no access to `streams` in progress, so the delegate may
// call back into the session.

extension HTTP2Session {
    /// The state of stream `id`. nghttp2 reports a header block as begin, one call per field, then
    /// the frame, all for one stream, so the last stream found is kept to spare those lookups.
    func stream(_ id: Int32) -> StreamState? {
        if let last = lastStream, last.id == id { return last.state }
        guard let state = streams[id] else { return nil }
        lastStream = (id, state)
        return state
    }

    /// Removes stream `id`'s state; false when there was none.
    @discardableResult
    func forget(_ id: Int32) -> Bool {
        if lastStream?.id == id { lastStream = nil }
        if sinkStreamID == id { endSinkBlock() }
        guard let state = streams.removeValue(forKey: id) else { return false }
        // What was never framed is never sent now.
        queuedBodyBytes -= state.outbound?.queuedBytes ?? 0
        return true
    }

    /// `opensStream`: a request's first block (server role), whose stream has no state yet.
    func onBeginHeaders(streamID: Int32, opensStream: Bool) {
        // The sink kept in a local, not read back from the state: each read was a retain and a release.
        let sink = notifyDelegate { $0.http2Session(self, headerFieldSinkForStream: streamID) } ?? nil
        if !opensStream, let existing = stream(streamID) {
            // A second block on the stream: trailers (or a final response after 1xx).
            existing.headerBlock.removeAll(keepingCapacity: true)
            existing.headerBlockSize = 0
            existing.fieldSink = sink
        } else {
            let state = StreamState()
            state.fieldSink = sink
            // One allocation for the block instead of the 4-5 regrowths appending a dozen fields takes.
            if sink == nil { state.headerBlock.reserveCapacity(12) }
            streams.insert(state, for: streamID)
            // The block's fields come next: found without a lookup.
            lastStream = (streamID, state)
        }
        if let sink {
            sinkStreamID = streamID
            sinkBlockSize = 0
            sinkForBlock = Unmanaged.passUnretained(sink)
        } else {
            endSinkBlock()
        }
    }

    func endSinkBlock() {
        sinkStreamID = 0
        sinkForBlock = nil
    }

    func onHeader(streamID: Int32, name: HTTP2FieldBuffer, value: HTTP2FieldBuffer, flags: UInt8) throws(HTTP2Error)
        -> Int32
    {
        // A field of the block a sink takes: straight to it.
        if streamID == sinkStreamID, let sink = sinkForBlock {
            let size = sinkBlockSize + name.bytes.count + value.bytes.count + 32
            if size <= headerListLimit {
                sinkBlockSize = size
                let neverIndexed = flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
                sink._withUnsafeGuaranteedRef { $0.headerField(name, value, neverIndexed: neverIndexed) }
                return 0
            }
            // Over the limit: the stream's own path refuses it, counting what the sink took.
            stream(streamID)?.headerBlockSize = sinkBlockSize
        }
        return try onHeaderOfStream(streamID: streamID, name: name, value: value, flags: flags)
    }

    private func onHeaderOfStream(
        streamID: Int32, name fieldName: HTTP2FieldBuffer, value fieldValue: HTTP2FieldBuffer, flags: UInt8
    ) throws(HTTP2Error) -> Int32 {
        let name = fieldName.bytes
        let value = fieldValue.bytes
        guard let state = stream(streamID) else {
            throw HTTP2Error(
                code: NGHTTP2_ERR_CALLBACK_FAILURE.rawValue,
                message: "header for stream \(streamID) without a header block")
        }
        state.headerBlockSize += name.count + value.count + 32
        if state.headerBlockSize > headerListLimit {
            // nghttp2 advertises SETTINGS_MAX_HEADER_LIST_SIZE but leaves enforcement to us.
            // Stop buffering and refuse the stream; the delegate never sees the block.
            nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, HTTP2ErrorCode.enhanceYourCalm.rawValue)
            state.headerBlock = []
            state.fieldSink = nil
            if sinkStreamID == streamID { endSinkBlock() }
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
        }
        let neverIndexed = flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
        if let sink = state.fieldSink {
            sink.headerField(fieldName, fieldValue, neverIndexed: neverIndexed)
            return 0
        }
        var header: HTTP2Header
        if let index = HTTP2HeaderInterning.index(of: name) {
            header = HTTP2Header(
                name: HTTP2HeaderInterning.names[index], value: receivedValues.value(value, forName: index),
                indexable: !neverIndexed)
            header.isInterned = true
        } else {
            header = HTTP2Header(name: Array(name), value: Array(value), indexable: !neverIndexed)
        }
        state.headerBlock.append(header)
        return 0
    }

    func onFrameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let hd = frame.pointee.hd
        let endStream = hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            guard let state = stream(hd.stream_id) else { return }
            let headers = state.headerBlock
            state.headerBlock = []
            state.headerBlockSize = 0
            state.fieldSink = nil
            if sinkStreamID == hd.stream_id { endSinkBlock() }
            notifyDelegate {
                $0.http2Session(self, didReceiveHeaders: headers, streamID: hd.stream_id, endStream: endStream)
            }
        case NGHTTP2_DATA.rawValue:
            // Chunks were delivered by on_data_chunk_recv; only END_STREAM is left to report.
            if endStream {
                notifyDelegate {
                    $0.http2Session(
                        self, didReceiveData: UnsafeRawBufferPointer(start: nil, count: 0), streamID: hd.stream_id,
                        endStream: true)
                }
            } else if hd.length == 0 {
                notifyDelegate { $0.http2SessionDidReceiveControlFrame(self) }
            }
        case NGHTTP2_SETTINGS.rawValue:
            if hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 {
                notifyDelegate { $0.http2SessionDidReceiveSettings(self) }
            }
            notifyDelegate { $0.http2SessionDidReceiveControlFrame(self) }
        case NGHTTP2_GOAWAY.rawValue:
            let goAway = frame.pointee.goaway
            let debugData =
                goAway.opaque_data_len == 0
                ? [] : Array(UnsafeBufferPointer(start: goAway.opaque_data, count: goAway.opaque_data_len))
            notifyDelegate {
                $0.http2Session(
                    self, didReceiveGoAway: goAway.last_stream_id,
                    errorCode: HTTP2ErrorCode(rawValue: goAway.error_code),
                    debugData: debugData)
            }
        default:
            // WINDOW_UPDATE, PRIORITY, PING, RST_STREAM.
            notifyDelegate { $0.http2SessionDidReceiveControlFrame(self) }
        }
    }

    func onDataChunk(streamID: Int32, _ data: UnsafeRawBufferPointer) {
        notifyDelegate { $0.http2Session(self, didReceiveData: data, streamID: streamID, endStream: false) }
    }

    func onStreamClose(streamID: Int32, errorCode: HTTP2ErrorCode) {
        forget(streamID)
        notifyDelegate { $0.http2Session(self, streamDidClose: streamID, errorCode: errorCode) }
    }

    /// A frame nghttp2 could not send.
    ///
    /// Server role: a response's HEADERS or trailers that could not be sent (a header block over
    /// the encoder's limit, such as a huge `grpc-message`) leave a stream that would never end, so
    /// it is reset (INTERNAL_ERROR) and the delegate told. Client role: a request nghttp2 dropped
    /// before sending (GOAWAY received or sent while it waited for a free stream slot) never opens
    /// a stream, so on_stream_close would never report it.
    func onFrameNotSent(_ frame: UnsafePointer<nghttp2_frame>, libraryError: Int32) {
        let hd = frame.pointee.hd
        if role == .server {
            // Only frames of a stream: a GOAWAY or PING not sent ends nothing here.
            guard hd.stream_id != 0,
                UInt32(hd.type) == NGHTTP2_HEADERS.rawValue || UInt32(hd.type) == NGHTTP2_DATA.rawValue,
                streams[hd.stream_id] != nil
            else { return }
            nghttp2_submit_rst_stream(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), hd.stream_id, HTTP2ErrorCode.internalError.rawValue)
            notifyDelegate {
                $0.http2Session(
                    self, didNotSendFrameOnStream: hd.stream_id, error: HTTP2Error(nghttp2: libraryError))
            }
            return
        }
        guard UInt32(hd.type) == NGHTTP2_HEADERS.rawValue, UInt32(hd.type) == NGHTTP2_HEADERS.rawValue,
            frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST,
            forget(hd.stream_id)
        else { return }
        notifyDelegate { $0.http2Session(self, streamDidClose: hd.stream_id, errorCode: .refusedStream) }
    }

    /// nghttp2_data_source_read_callback: fills one DATA frame from the stream's queue.
    func readBody(streamID: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: UnsafeMutablePointer<UInt32>)
        -> Int
    {
        // Read in place through `?.`: comparing `state.outbound` with nil first copied the stream.
        guard let state = stream(streamID), let result = state.outbound?.read(into: buffer) else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        if case .bytes(let count, _) = result {
            queuedBodyBytes -= count
            framedBodyBytes += count
        }
        switch result {
        case .deferred:
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        case .bytes(let count, eof: false):
            return count
        case .bytes(let count, eof: true):
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            if let trailers = state.outbound!.trailers {
                // The documented way to end a body with trailers: EOF without END_STREAM, then
                // submit the trailer HEADERS (END_STREAM) from inside this callback.
                flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
                let rv = trailers.withNVs { nghttp2_submit_trailer(session, streamID, $0, $1) }
                if rv < 0 { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
            }
            return count
        }
    }
}
