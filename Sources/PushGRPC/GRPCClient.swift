import PushCore
import PushHTTP2
import PushPosix
import PushTransport
import Synchronization

/// A minimal gRPC client over h2c for the command line (`pushgate send`) and tests: one connection,
/// unary calls.
public final class GRPCClient: Sendable {
    private let loop: EventLoop
    private let connection: GRPCClientConnection

    /// Connects to `host:port` (cleartext HTTP/2 with prior knowledge).
    public static func connect(host: String, port: Int, timeout: Duration = .seconds(10)) async throws -> GRPCClient {
        let loop = try EventLoop.spawn(name: "grpc-client")
        let connection = GRPCClientConnection(loop: loop, authority: "\(host):\(port)")
        do {
            try await connection.connect(host: host, port: port, timeout: timeout)
        } catch {
            loop.shutdown()
            throw error
        }
        return GRPCClient(loop: loop, connection: connection)
    }

    private init(loop: EventLoop, connection: GRPCClientConnection) {
        self.loop = loop
        self.connection = connection
    }

    /// Calls `path` (`/package.Service/Method`) with one request message.
    /// - Throws: the call's ``GRPCStatus`` when it is not OK.
    public func unary(
        _ path: String, _ request: [UInt8], timeout: Duration? = nil, metadata: [(String, String)] = []
    ) async throws -> [UInt8] {
        try await connection.call(path: path, request: request, timeout: timeout, metadata: metadata)
    }

    public func close() {
        let connection = self.connection
        loop.execute { connection.close() }
        loop.shutdown()
    }
}

/// The client side of the HTTP/2 connection; confined to its loop (hence `@unchecked Sendable`).
final class GRPCClientConnection: HTTP2SessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    private struct Call {
        var continuation: CheckedContinuation<[UInt8], any Error>
        var deframer = GRPCMessageDeframer(maxMessageSize: 64 << 20)
        var messages: [[UInt8]] = []
        var status: GRPCStatus?
    }

    let loop: EventLoop
    private let authority: String
    private var transport: HTTPTransport?
    private var calls: [Int32: Call] = [:]

    init(loop: EventLoop, authority: String) {
        self.loop = loop
        self.authority = authority
    }

    func connect(host: String, port: Int, timeout: Duration) async throws {
        try await HTTPTransport.connectCleartextHTTP2(
            host: host, port: port, loop: loop, timeout: timeout, client: self
        ) { [self] in transport = $0 }
    }

    func call(path: String, request: [UInt8], timeout: Duration?, metadata: [(String, String)]) async throws -> [UInt8]
    {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
            loop.execute { [self] in
                guard let transport, !transport.isClosed else {
                    continuation.resume(throwing: GRPCStatus(.unavailable, "the connection is closed"))
                    return
                }
                var headers = [
                    HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "http"), HTTP2Header(":path", path),
                    HTTP2Header(":authority", authority), HTTP2Header("content-type", "application/grpc"),
                    HTTP2Header("te", "trailers"),
                ]
                if let timeout {
                    let millis = max(
                        1, timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
                    headers.append(HTTP2Header("grpc-timeout", "\(min(millis, 99_999_999))m"))
                }
                headers += metadata.map { HTTP2Header($0.0, $0.1) }
                do {
                    let streamID = try transport.session.submitRequest(
                        headers: headers, body: GRPCMessageFramer.frame(request))
                    calls[streamID] = Call(continuation: continuation)
                    transport.setNeedsFlush()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func close() {
        transport?.close(flushFirst: true)
    }

    // MARK: Events

    func transportDidBecomeReady(_ transport: HTTPTransport) {}  // cleartext: ready once connected

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        let reason = GRPCStatus(.unavailable, "connection closed\(error.map { ": \($0)" } ?? "")")
        for call in calls.values { call.continuation.resume(throwing: reason) }
        calls.removeAll()
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        var code: Int?
        var message = ""
        for header in headers {
            switch header.nameString {
            case "grpc-status": code = Int(header.valueString)
            case "grpc-message": message = GRPCPercentEncoding.decode(header.valueString)
            case ":status" where header.valueString != "200":
                calls[streamID]?.status = GRPCStatus(.unknown, "HTTP status \(header.valueString)")
            default: break
            }
        }
        if let code {
            calls[streamID]?.status = GRPCStatus(GRPCStatusCode(rawValue: code) ?? .unknown, message)
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard var call = calls[streamID] else { return }
        call.deframer.append(data)
        do {
            while let message = try call.deframer.next() { call.messages.append(message.bytes) }
        } catch {
            call.status = error
        }
        calls[streamID] = call
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard let call = calls.removeValue(forKey: streamID) else { return }
        let status = call.status ?? GRPCStatus(.internalError, "the stream closed without a status (\(errorCode))")
        if status.code == .ok, let message = call.messages.first {
            call.continuation.resume(returning: message)
        } else if status.code == .ok {
            call.continuation.resume(throwing: GRPCStatus(.internalError, "the call ended without a response message"))
        } else {
            call.continuation.resume(throwing: status)
        }
    }
}
