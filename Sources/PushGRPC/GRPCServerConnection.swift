import PushCore
import PushHTTP2
import PushPosix

/// One client connection: an HTTP/2 server session over a socket, and the gRPC calls on its streams.
///
/// Confined to its connection's event loop (every entry point is a loop callback), which is why it
/// is `@unchecked Sendable`.
final class GRPCServerConnection: ConnectionHandler, HTTP2SessionDelegate, @unchecked Sendable {
    let connection: Connection
    var loop: EventLoop { connection.loop }
    private(set) var session: HTTP2Session!
    private let router: GRPCRouter
    private let configuration: GRPCServerConfiguration
    private var calls: [Int32: GRPCServerCall] = [:]
    private var output: [UInt8] = []
    private var readingPaused = false
    /// True while nghttp2 is inside `receive` (calling our delegate): output is drained once after.
    private var receiving = false
    /// Streams answered Trailers-Only while the client was still sending: reset once the answer is out.
    private var pendingResets: [Int32] = []

    init(connection: Connection, router: GRPCRouter, configuration: GRPCServerConfiguration) throws {
        self.connection = connection
        self.router = router
        self.configuration = configuration
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = configuration.maxConcurrentStreams
        settings.maxHeaderListSize = configuration.maxHeaderListSize
        self.session = try HTTP2Session(role: .server, settings: settings, delegate: self)
        output.reserveCapacity(64 * 1024)
    }

    // MARK: Socket events

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        receiving = true
        defer { receiving = false }
        do {
            try session.receive(bytes)
        } catch {
            receiving = false
            // A connection-level protocol error (garbage, a bad preface): nghttp2 has queued a GOAWAY.
            // Send it and close this connection only; other clients are unaffected.
            flush()
            connection.close(flushFirst: true)
            return
        }
        receiving = false
        flush()
    }

    func connectionDidDrain(_ connection: Connection) {
        if readingPaused {
            readingPaused = false
            connection.resumeReading()
        }
        flush()
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        for call in calls.values { call.cancel() }
        calls.removeAll()
    }

    /// Moves what nghttp2 wants to send into the socket's buffer, unless the peer is not reading.
    ///
    /// The socket flushes once per loop turn, so everything produced in one turn goes out in one write.
    func flush() {
        // nghttp2 cannot produce output from inside its own callbacks; `receive` flushes when done.
        guard !connection.isClosed, !receiving else { return }
        if connection.pendingWriteBytes >= configuration.outputHighWaterMark {
            // The client does not read what we send: stop reading its requests too, until it drains.
            if !readingPaused {
                readingPaused = true
                connection.pauseReading()
            }
            return
        }
        do {
            output.removeAll(keepingCapacity: true)
            try session.drainOutput(into: &output, maxBytes: configuration.outputHighWaterMark)
            if !pendingResets.isEmpty {
                for streamID in pendingResets {
                    try? session.resetStream(streamID: streamID, errorCode: .noError)
                }
                pendingResets.removeAll()
                try session.drainOutput(into: &output, maxBytes: configuration.outputHighWaterMark)
            }
            if !output.isEmpty { connection.write(output) }
        } catch {
            connection.close(flushFirst: false)
            return
        }
        if !session.wantsRead && !session.wantsWrite {
            connection.close(flushFirst: true)
        }
    }

    func resetAfterNextFlush(_ streamID: Int32) {
        pendingResets.append(streamID)
    }

    /// A session call for `call` failed (the stream is already gone): forget the call.
    func streamFailed(_ call: GRPCServerCall, error: any Error) {
        call.cancel()
        calls[call.streamID] = nil
    }

    // MARK: HTTP/2 events

    func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        if let call = calls[streamID] {
            // Trailers from a client are allowed by HTTP/2 and meaningless to gRPC.
            if endStream { call.receiveEnd() }
            return
        }
        startCall(headers: headers, streamID: streamID, endStream: endStream)
    }

    func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard let call = calls[streamID] else { return }
        if data.count > 0 { call.receive(data) }
        if endStream { call.receiveEnd() }
    }

    func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        calls.removeValue(forKey: streamID)?.cancel()
    }

    func http2SessionDidReceiveSettings(_ session: HTTP2Session) {}

    func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {}

    // MARK: Calls

    private func startCall(headers: [HTTP2Header], streamID: Int32, endStream: Bool) {
        let request = GRPCRequestHead(headers: headers)
        let call = GRPCServerCall(connection: self, streamID: streamID, maxMessageSize: configuration.maxMessageSize)
        calls[streamID] = call
        if let httpStatus = request.httpRejection {
            respondHTTP(status: httpStatus, streamID: streamID)
            call.cancel()
            return
        }
        let timeout: Duration?
        switch request.timeout {
        case .none: timeout = nil
        case .some(.some(let value)): timeout = value
        case .some(.none):
            call.finish(GRPCStatus(.invalidArgument, "grpc-timeout: not a valid timeout (at most 8 digits and a unit H, M, S, m, u or n)"))
            if endStream { call.receiveEnd() }
            return
        }
        guard let method = router.method(forPath: request.path) else {
            call.finish(GRPCStatus(.unimplemented, router.unimplementedMessage(forPath: request.path)))
            if endStream { call.receiveEnd() }
            return
        }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        let context = GRPCCallContext(
            path: request.path, deadline: deadline, metadata: request.metadata,
            peer: connection.remoteAddress, isLoopbackPeer: connection.isLoopbackPeer)
        call.start(method, context: context, timeout: timeout)
        if endStream { call.receiveEnd() }
    }

    private func respondHTTP(status: Int, streamID: Int32) {
        try? session.sendResponseHeaders(
            streamID: streamID, headers: [HTTP2Header(":status", String(status))], endStream: true)
        flush()
    }
}
