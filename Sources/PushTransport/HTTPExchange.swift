import PushHTTP1
public import PushHTTP2
public import PushPosix
public import PushTLS

/// One HTTP request over a fresh TLS connection, closed after the answer: for the rare calls
/// that need no pool, such as an OAuth2 token exchange once an hour. HTTP/2 or HTTP/1.1, as the
/// server chooses by ALPN among what the TLS context offers (Amazon's token endpoint speaks only
/// HTTP/1.1). (Deliveries use the pooled,
/// long-lived connections of the delivery engine instead.)
public enum HTTPExchange {
    /// A complete response.
    public struct Response: Sendable {
        public var status: Int
        public var headers: [HTTP2Header]
        public var body: [UInt8]
    }

    /// Sends `headers` (pseudo-headers first; in HTTP/1.1 `:method` and `:path` make the request
    /// line and `:authority` the `Host`) and `body` to `host:port` over TLS and answers the response. Throws when the connection, the TLS handshake or the stream fails, or
    /// nothing complete arrived within `timeout`.
    public static func send(
        host: String, port: Int, headers: [HTTP2Header], body: [UInt8], tlsContext: TLSContext, loop: EventLoop,
        timeout: Duration, maxBody: Int = 1 << 20, proxy: HTTPProxy? = nil
    ) async throws -> Response {
        try await withCheckedThrowingContinuation { continuation in
            loop.execute {
                let exchange = OneExchange(
                    loop: loop, headers: headers, body: body, maxBody: maxBody, continuation: continuation)
                exchange.start(host: host, port: port, tlsContext: tlsContext, timeout: timeout, proxy: proxy)
            }
        }
    }
}

/// The state of one ``HTTPExchange``; confined to its loop (hence `@unchecked Sendable`).
private final class OneExchange: HTTP2SessionDelegate, HTTP1ParserDelegate, HTTPTransportOwner, @unchecked Sendable {
    private let loop: EventLoop
    private let headers: [HTTP2Header]
    private let body: [UInt8]
    private let maxBody: Int
    private var continuation: CheckedContinuation<HTTPExchange.Response, any Error>?
    private var transport: HTTPTransport?
    private var streamID: Int32 = 0
    private var response = HTTPExchange.Response(status: 0, headers: [], body: [])
    private var timer: TimerID?

    init(
        loop: EventLoop, headers: [HTTP2Header], body: [UInt8], maxBody: Int,
        continuation: CheckedContinuation<HTTPExchange.Response, any Error>
    ) {
        self.loop = loop
        self.headers = headers
        self.body = body
        self.maxBody = maxBody
        self.continuation = continuation
    }

    func start(host: String, port: Int, tlsContext: TLSContext, timeout: Duration, proxy: HTTPProxy?) {
        let transport: HTTPTransport
        do {
            let tls = try TLSConnection(context: tlsContext, serverName: host)
            transport = HTTPTransport(
                loop: loop, tls: tls, policy: .auto, http2Settings: .clientDefaults, http2Delegate: self,
                http1Delegate: self, owner: self)
        } catch {
            finish(.failure(error))
            return
        }
        self.transport = transport
        timer = loop.schedule(after: timeout) { [self] in
            timer = nil
            finish(.failure(TransportError("no complete answer from \(host):\(port) within \(timeout)")))
        }
        transport.connect(host: host, port: port, timeout: timeout, proxy: proxy) { [self] result in
            if case .failure(let error) = result { finish(.failure(error)) }
        }
    }

    /// Answers once; closes the connection either way.
    private func finish(_ result: Result<HTTPExchange.Response, any Error>) {
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        transport?.close(flushFirst: false)
        transport = nil
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(with: result)
    }

    func transportDidBecomeReady(_ transport: HTTPTransport) {
        do {
            if let http1 = transport.http1Session {
                var head: [UInt8] = []
                try HTTP1Writer.requestHead(
                    method: value(":method") ?? "GET", target: Array((value(":path") ?? "/").utf8),
                    headers: [("Host", value(":authority") ?? "")]
                        + headers.filter { !$0.name.starts(with: [0x3A]) }
                        .map { ($0.nameString, $0.valueString) },
                    contentLength: body.count, into: &head)
                body.withUnsafeBytes { http1.send(head: head, body: $0) }
            } else {
                streamID = try transport.session.submitRequest(headers: headers, body: body)
            }
            transport.setNeedsFlush()
        } catch {
            finish(.failure(error))
        }
    }

    private func value(_ pseudo: String) -> String? {
        headers.first { $0.nameString == pseudo }?.valueString
    }

    // MARK: HTTP/1.1 answers

    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        response.headers.append(
            HTTP2Header(name: Array(name).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, value: Array(value)))
    }

    func http1HeadersComplete(_ head: HTTP1Head) {
        response.status = head.status
    }

    func http1Body(_ bytes: UnsafeRawBufferPointer) {
        guard response.body.count + bytes.count <= maxBody else {
            finish(.failure(TransportError("the answer is larger than \(maxBody) bytes")))
            return
        }
        response.body.append(contentsOf: bytes)
    }

    func http1MessageComplete(keepAlive: Bool) {
        finish(.success(response))
    }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        finish(.failure(error ?? TransportError("the connection closed before the answer was complete")))
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        guard streamID == self.streamID else { return }
        for header in headers where header.nameString == ":status" {
            response.status = Int(header.valueString) ?? 0
        }
        response.headers += headers
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        guard streamID == self.streamID else { return }
        guard response.body.count + data.count <= maxBody else {
            finish(.failure(TransportError("the answer is larger than \(maxBody) bytes")))
            return
        }
        response.body.append(contentsOf: data)
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        guard streamID == self.streamID else { return }
        if response.status == 0 {
            finish(.failure(TransportError("the stream was reset (\(errorCode)) before an answer")))
        } else {
            finish(.success(response))
        }
    }
}
