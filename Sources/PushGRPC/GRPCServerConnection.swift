import PushCore
import PushHTTP2
import PushPosix
import PushTransport

/// One client connection: the gRPC calls on the streams of an HTTP/2 server session.
///
/// Confined to its connection's event loop (every entry point is a loop callback), which is why it
/// is `@unchecked Sendable`.
final class GRPCServerConnection: HTTP2SessionDelegate, HTTP2TransportOwner, @unchecked Sendable {
    let loop: EventLoop
    private(set) var transport: HTTP2Transport!
    var session: HTTP2Session { transport.session }
    private let router: GRPCRouter
    let configuration: GRPCServerConfiguration
    private let peer: String
    private let isLoopbackPeer: Bool
    private var calls: [Int32: GRPCServerCall] = [:]

    /// Serves `connection`; the returned transport is its handler.
    static func serve(
        _ connection: Connection, router: GRPCRouter, configuration: GRPCServerConfiguration
    ) throws -> HTTP2Transport {
        let server = GRPCServerConnection(connection: connection, router: router, configuration: configuration)
        var settings = HTTP2Settings.serverDefaults
        settings.maxConcurrentStreams = configuration.maxConcurrentStreams
        settings.maxHeaderListSize = configuration.maxHeaderListSize
        let transport = try HTTP2Transport(
            loop: connection.loop, tls: nil, role: .server, settings: settings, sessionDelegate: server, owner: server)
        transport.outputHighWaterMark = configuration.outputHighWaterMark
        server.transport = transport
        transport.attach(connection)
        return transport
    }

    private init(connection: Connection, router: GRPCRouter, configuration: GRPCServerConfiguration) {
        self.loop = connection.loop
        self.router = router
        self.configuration = configuration
        self.peer = connection.remoteAddress
        self.isLoopbackPeer = connection.isLoopbackPeer
    }

    /// Frames submitted outside a socket event go out at the end of the loop turn.
    func flush() {
        transport.setNeedsFlush()
    }

    func resetAfterNextFlush(_ streamID: Int32) {
        transport.resetAfterFlush(streamID)
    }

    /// A session call for `call` failed (the stream is already gone): forget the call.
    func streamFailed(_ call: GRPCServerCall, error: any Error) {
        call.cancel()
        calls[call.streamID] = nil
    }

    // MARK: Transport events

    func transportDidBecomeReady(_ transport: HTTP2Transport) {}

    func transport(_ transport: HTTP2Transport, didCloseWith error: (any Error)?) {
        for call in calls.values { call.cancel() }
        calls.removeAll()
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

    // MARK: Calls

    private func startCall(headers: [HTTP2Header], streamID: Int32, endStream: Bool) {
        let request = GRPCRequestHead(headers: headers)
        let call = GRPCServerCall(connection: self, streamID: streamID, maxMessageSize: configuration.maxMessageSize)
        calls[streamID] = call
        if let httpStatus = request.httpRejection {
            try? session.sendResponseHeaders(
                streamID: streamID, headers: [HTTP2Header(":status", String(httpStatus))], endStream: true)
            call.cancel()
            flush()
            return
        }
        defer { if endStream { call.receiveEnd() } }
        let timeout: Duration?
        switch request.timeout {
        case .none: timeout = nil
        case .some(.some(let value)): timeout = value
        case .some(.none):
            call.finish(
                GRPCStatus(
                    .invalidArgument, "grpc-timeout: not a valid timeout (at most 8 digits and a unit H, M, S, m, u or n)"))
            return
        }
        guard let method = router.method(forPath: request.path) else {
            call.finish(GRPCStatus(.unimplemented, router.unimplementedMessage(forPath: request.path)))
            return
        }
        let context = GRPCCallContext(
            path: request.path, deadline: timeout.map { ContinuousClock.now + $0 }, metadata: request.metadata,
            peer: peer, isLoopbackPeer: isLoopbackPeer)
        call.start(method, context: context, timeout: timeout)
    }
}
