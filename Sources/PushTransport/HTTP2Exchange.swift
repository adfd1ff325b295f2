import PushHTTP2
import PushPosix
import PushTLS

/// One HTTP/2 request over a fresh TLS connection, closed after the answer: for the rare calls
/// that need no pool, such as an OAuth2 token exchange once an hour. (Deliveries use the pooled,
/// long-lived connections of the delivery engine instead.)
public enum HTTP2Exchange {
    /// A complete response.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [HTTP2Header]
        public var body: [UInt8]
    }

    /// Sends `headers` (pseudo-headers first) and `body` to `host:port` over TLS (ALPN h2) and
    /// answers the response. Throws when the connection, the TLS handshake or the stream fails, or
    /// nothing complete arrived within `timeout`.
    public static func send(
        host: String, port: Int, headers: [HTTP2Header], body: [UInt8], tlsContext: TLSContext, loop: EventLoop,
        timeout: Duration, maxBody: Int = 1 << 20
    ) async throws -> Response {
        try await withCheckedThrowingContinuation { continuation in
            loop.execute {
                let exchange = OneExchange(
                    loop: loop, headers: headers, body: body, maxBody: maxBody, continuation: continuation)
                exchange.start(host: host, port: port, tlsContext: tlsContext, timeout: timeout)
            }
        }
    }
}

/// The state of one ``HTTP2Exchange``; confined to its loop (hence `@unchecked Sendable`).
private final class OneExchange: HTTP2SessionDelegate, HTTP2TransportOwner, @unchecked Sendable {
    private let loop: EventLoop
    private let headers: [HTTP2Header]
    private let body: [UInt8]
    private let maxBody: Int
    private var continuation: CheckedContinuation<HTTP2Exchange.Response, any Error>?
    private var transport: HTTP2Transport?
    private var streamID: Int32 = 0
    private var response = HTTP2Exchange.Response(status: 0, headers: [], body: [])
    private var timer: TimerID?

    init(
        loop: EventLoop, headers: [HTTP2Header], body: [UInt8], maxBody: Int,
        continuation: CheckedContinuation<HTTP2Exchange.Response, any Error>
    ) {
        self.loop = loop
        self.headers = headers
        self.body = body
        self.maxBody = maxBody
        self.continuation = continuation
    }

    func start(host: String, port: Int, tlsContext: TLSContext, timeout: Duration) {
        let transport: HTTP2Transport
        do {
            let tls = try TLSConnection(context: tlsContext, serverName: host)
            transport = try HTTP2Transport(
                loop: loop, tls: tls, role: .client, settings: .clientDefaults, sessionDelegate: self, owner: self)
        } catch {
            finish(.failure(error))
            return
        }
        self.transport = transport
        timer = loop.schedule(after: timeout) { [self] in
            timer = nil
            finish(.failure(TransportError("no complete answer from \(host):\(port) within \(timeout)")))
        }
        transport.connect(host: host, port: port, timeout: timeout) { [self] result in
            if case .failure(let error) = result { finish(.failure(error)) }
        }
    }

    /// Answers once; closes the connection either way.
    private func finish(_ result: Result<HTTP2Exchange.Response, any Error>) {
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        transport?.close(flushFirst: false)
        transport = nil
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }

    func transportDidBecomeReady(_ transport: HTTP2Transport) {
        do {
            streamID = try transport.session.submitRequest(headers: headers, body: body)
            transport.setNeedsFlush()
        } catch {
            finish(.failure(error))
        }
    }

    func transport(_ transport: HTTP2Transport, didCloseWith error: (any Error)?) {
        finish(.failure(error ?? TransportError("the connection closed before the answer was complete")))
    }

    func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        guard streamID == self.streamID else { return }
        for header in headers where header.nameString == ":status" {
            response.status = Int(header.valueString) ?? 0
        }
        response.headers += headers
    }

    func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard streamID == self.streamID else { return }
        guard response.body.count + data.count <= maxBody else {
            finish(.failure(TransportError("the answer is larger than \(maxBody) bytes")))
            return
        }
        response.body.append(contentsOf: data)
    }

    func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard streamID == self.streamID else { return }
        if response.status == 0 {
            finish(.failure(TransportError("the stream was reset (\(errorCode)) before an answer")))
        } else {
            finish(.success(response))
        }
    }
}
