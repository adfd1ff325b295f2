import CNGHTTP2

/// One HTTP/2 connection's protocol state (an `nghttp2_session`), in either role, without I/O.
///
/// Bytes read from the transport go into `receive(_:)`; bytes to write come out of
/// `drainOutput(into:maxBytes:)`; everything else is reported to the delegate while those run.
/// Not thread-safe by design: the owner confines a session to one thread (its event loop), so
/// there are no locks on the hot path.
public final class HTTP2Session {
    public enum Role: Sendable { case server, client }

    public let role: Role
    /// Held strongly, so a cycle while the delegate (the connection object that owns this session)
    /// owns it: whoever ends the connection breaks it by setting nil (``HTTPTransport`` does when
    /// it closes, as it releases its owner). Not weak: a weak reference gives the delegate a side
    /// table, which sends every retain and release of it, several per request, the slow way.
    /// Events are dropped once it is nil.
    public var delegate: HTTP2SessionDelegate?
    /// The delegate while nghttp2 runs (``receive(_:)``, ``drainOutput(maxBytes:to:)``), which
    /// hold it: events call it through this, with no retain and release each.
    var callbackDelegate: Unmanaged<HTTP2SessionDelegate>?

    /// The C session; owned, freed in deinit.
    let session: OpaquePointer
    /// Live streams: created when a request is submitted (client) or its headers begin
    /// arriving (server); removed in on_stream_close.
    var streams = HTTP2StreamTable<StreamState>()
    /// The stream ``stream(_:)`` found last (see there); cleared when that stream is forgotten.
    var lastStream: (id: Int32, state: StreamState)?
    /// The header block being received when a field sink takes it (0: none; stream 0 has no
    /// headers), its size so far and its sink: checked first for each field, as blocks never
    /// interleave, so a field costs no lookup. Unmanaged: the stream's state in `streams` holds the
    /// sink until the block ends or the stream is forgotten, and both clear this; so a field costs
    /// no retain either.
    var sinkStreamID: Int32 = 0
    var sinkBlockSize = 0
    var sinkForBlock: Unmanaged<HTTP2HeaderFieldSink>?
    /// The last value received per known header name, shared when it repeats.
    var receivedValues = ReceivedValues()
    /// RFC 9113 header-list size above which a received header block resets its stream.
    var headerListLimit: Int
    /// Body bytes queued on all streams and not yet framed, and body bytes framed so far: what
    /// an owner watches to see whether a peer takes what it is sent.
    public internal(set) var queuedBodyBytes = 0
    public internal(set) var framedBodyBytes = 0
    /// Set while inside nghttp2_session_mem_recv/mem_send, which must not be re-entered.
    var isInsideNghttp2 = false
    /// An error thrown by a Swift callback handler, rethrown from receive/drainOutput in place of
    /// nghttp2's generic NGHTTP2_ERR_CALLBACK_FAILURE.
    var callbackError: HTTP2Error?

    /// Creates the session and queues its SETTINGS frame (for a client, preceded by the
    /// connection preface; a server session consumes the client's preface by itself).
    public init(role: Role, settings: HTTP2Settings, delegate: HTTP2SessionDelegate) throws(HTTP2Error) {
        self.role = role
        self.delegate = delegate
        self.headerListLimit = settings.enforcedHeaderListSize

        var callbacks: OpaquePointer?
        try HTTP2Error.check(nghttp2_session_callbacks_new(&callbacks))
        defer { nghttp2_session_callbacks_del(callbacks) }
        Self.installCallbacks(callbacks)

        var option: OpaquePointer?
        try HTTP2Error.check(nghttp2_option_new(&option))
        defer { nghttp2_option_del(option) }
        // Until the peer's SETTINGS arrive nghttp2 assumes the peer allows this many streams
        // (RFC 9113 says "unlimited"). Kept at nghttp2's 100: APNs starts at 1, so a client
        // should wait for http2SessionDidReceiveSettings before submitting a burst.
        nghttp2_option_set_peer_max_concurrent_streams(option, 100)
        // HTTP messaging validation stays on (nghttp2's default): it resets malformed requests.
        if settings.manualFlowControl { nghttp2_option_set_no_auto_window_update(option, 1) }

        var created: OpaquePointer?
        // user_data is attached below, once `self` is fully initialized.
        let rv =
            switch role {
            case .server: nghttp2_session_server_new2(&created, callbacks, nil, option)
            case .client: nghttp2_session_client_new2(&created, callbacks, nil, option)
            }
        try HTTP2Error.check(rv)
        session = created!

        // Unretained: the C session never outlives self (deinit frees it).
        nghttp2_session_set_user_data(session, Unmanaged.passUnretained(self).toOpaque())
        let entries = settings.entries(for: role)
        try HTTP2Error.check(
            entries.withUnsafeBufferPointer {
                nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), $0.baseAddress, $0.count)
            })
        // The connection window is not a SETTINGS parameter; raising it here puts a
        // WINDOW_UPDATE right after our SETTINGS so concurrent streams don't share 64 KiB.
        if settings.connectionWindowSize > 65_535 {
            try HTTP2Error.check(
                nghttp2_session_set_local_window_size(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Int32(clamping: settings.connectionWindowSize)))
        }
    }

    deinit {
        nghttp2_session_del(session)
    }

    // MARK: Bytes in, bytes out

    /// Feeds received bytes; delegate events fire before this returns.
    ///
    /// Throws when nghttp2 gives up on the connection (bad client preface, flooding, a failed
    /// callback); a GOAWAY has then been queued, so the caller should drain output and close.
    /// Most frame-level protocol errors do not throw: nghttp2 queues a GOAWAY itself and ignores
    /// further input, and once it is drained `wantsRead` and `wantsWrite` both turn false.
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2Error) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        try enterNghttp2()
        defer { isInsideNghttp2 = false }
        let rv = withCallbacks {
            nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
        if rv < 0 {
            let code = Int32(truncatingIfNeeded: rv)
            // nghttp2 queues no GOAWAY for these; queue one so the peer learns why.
            nghttp2_session_terminate_session(session, Self.goAwayCode(forFatal: code).rawValue)
            throw takeCallbackError() ?? HTTP2Error(nghttp2: code)
        }
    }

    public func receive(_ bytes: [UInt8]) throws(HTTP2Error) {
        // Array.withUnsafeBytes is untyped-rethrows; carry the typed error out by value.
        let failure: HTTP2Error? = bytes.withUnsafeBytes { raw in
            do throws(HTTP2Error) { try receive(raw) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Appends what nghttp2 wants to send to `buffer`, stopping once about `maxBytes` were
    /// appended (it may overshoot by one frame). Returns the number of bytes appended.
    /// Body data is copied exactly once here, from the queued `[UInt8]` chunks into frames.
    @discardableResult
    public func drainOutput(into buffer: inout [UInt8], maxBytes: Int = 1 << 20) throws(HTTP2Error) -> Int {
        try drainOutput(maxBytes: maxBytes) { buffer.append(contentsOf: $0) }
    }

    /// The same, handing each piece nghttp2 produces to `sink`, which must copy it before it
    /// returns (nghttp2 reuses the memory): where the bytes go (a socket's send queue) takes
    /// them without a staging array in between.
    @discardableResult
    public func drainOutput(
        maxBytes: Int = 1 << 20, to sink: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP2Error) -> Int {
        try enterNghttp2()
        defer { isInsideNghttp2 = false }
        var appended = 0
        while appended < maxBytes {
            var chunk: UnsafePointer<UInt8>?
            let n = withCallbacks { nghttp2_session_mem_send(session, &chunk) }
            if n < 0 { throw takeCallbackError() ?? HTTP2Error(nghttp2: Int32(truncatingIfNeeded: n)) }
            guard n > 0, let chunk else { break }
            // Valid until the next mem_send call.
            sink(UnsafeRawBufferPointer(start: chunk, count: n))
            appended += n
        }
        return appended
    }

    /// nghttp2 still expects frames from the peer.
    public var wantsRead: Bool { nghttp2_session_want_read(session) != 0 }
    /// nghttp2 has frames to send (deferred bodies waiting for sendData don't count).
    /// Both false: the connection is finished and can be closed.
    public var wantsWrite: Bool { nghttp2_session_want_write(session) != 0 }

    // MARK: State

    /// The peer's SETTINGS_MAX_CONCURRENT_STREAMS (nghttp2's assumed 100 before its SETTINGS
    /// arrive). Requests beyond it are not refused: nghttp2 holds their HEADERS until a stream
    /// closes, so a client may submit more and they go out in order.
    public var remoteMaxConcurrentStreams: UInt32 {
        nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
    }

    /// Streams this session tracks: submitted (even if still queued by nghttp2), open or
    /// half-closed, and not yet reported through streamDidClose.
    /// Body bytes queued on a stream and not yet framed (they wait for the peer's flow-control
    /// window): what an owner bounds to keep a peer that does not read from growing memory.
    public func queuedBodyBytes(streamID: Int32) -> Int {
        streams[streamID]?.outbound?.queuedBytes ?? 0
    }

    public var openStreamCount: Int { streams.count }

    // MARK: Flow control (``HTTP2Settings/manualFlowControl``)

    /// Returns `bytes` received on `streamID` to both its window and the connection's.
    public func consume(streamID: Int32, bytes: Int) {
        guard bytes > 0 else { return }
        // INVALID_ARGUMENT for a stream already gone is harmless: nothing is owed to it.
        _ = nghttp2_session_consume(session, streamID, bytes)
    }

    /// Returns `bytes` to the connection's window only.
    public func consumeConnection(bytes: Int) {
        guard bytes > 0 else { return }
        _ = nghttp2_session_consume_connection(session, bytes)
    }

    /// Returns `bytes` to `streamID`'s window only.
    public func consumeStream(_ streamID: Int32, bytes: Int) {
        guard bytes > 0 else { return }
        _ = nghttp2_session_consume_stream(session, streamID, bytes)
    }

    /// Client role: false once a GOAWAY was sent or received, when new requests would fail.
    public var canSubmitRequests: Bool {
        role == .client && nghttp2_session_check_request_allowed(session) != 0
    }

    /// The highest peer-initiated stream id nghttp2 has processed (what GOAWAY reports by default).
    public var lastProcessedStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(session) }

    // MARK: Internals

    private func enterNghttp2() throws(HTTP2Error) {
        if isInsideNghttp2 {
            throw HTTP2Error(
                code: NGHTTP2_ERR_INVALID_STATE.rawValue,
                message: "receive/drainOutput called re-entrantly from a delegate method")
        }
        isInsideNghttp2 = true
    }

    /// Runs `body` (a call into nghttp2, which calls back) with the session and its delegate held
    /// until it returns, whatever the delegate drops meanwhile: its last reference to the session,
    /// or the transport's closing setting ``delegate`` to nil (events stop then).
    @inline(__always)
    private func withCallbacks<Result>(_ body: () -> Result) -> Result {
        let held = delegate
        callbackDelegate = held.map { Unmanaged.passUnretained($0) }
        defer { callbackDelegate = nil }
        return withExtendedLifetime(self) { withExtendedLifetime(held) { body() } }
    }

    /// Calls the delegate, if there still is one: through the reference ``withCallbacks(_:)``
    /// holds while nghttp2 runs.
    @inline(__always)
    func notifyDelegate<Result>(_ event: (HTTP2SessionDelegate) -> Result) -> Result? {
        guard delegate != nil else { return nil }
        if let held = callbackDelegate { return held._withUnsafeGuaranteedRef(event) }
        return delegate.map(event)
    }

    private func takeCallbackError() -> HTTP2Error? {
        defer { callbackError = nil }
        return callbackError
    }

    private static func goAwayCode(forFatal code: Int32) -> HTTP2ErrorCode {
        switch code {
        case NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue: .protocolError
        case NGHTTP2_ERR_FLOODED.rawValue: .enhanceYourCalm
        default: .internalError
        }
    }
}
