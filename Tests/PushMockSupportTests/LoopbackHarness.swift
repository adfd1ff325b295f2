import PushHTTP1
import PushHTTP2
import PushMockSupport
import PushMockTesting
import PushPosix
import PushSync
import PushTLS
import PushTransport

/// A handler that keeps every request it is given and answers each with `answer(request)`.
final class RecordingHandler: MockRequestHandler, Sendable {
    private let requests = Locked<[MockRequest]>([])
    private let answer: @Sendable (MockRequest) -> MockResponse

    init(answer: @escaping @Sendable (MockRequest) -> MockResponse) { self.answer = answer }

    func handle(_ request: MockRequest, now: UInt64) -> MockResponse {
        requests.withLock { $0.append(request) }
        return answer(request)
    }

    var received: [MockRequest] { requests.withLock { $0 } }
}

/// A ``MockHTTP2Server`` on two loops with a ``RecordingHandler`` and a stats recorder.
final class LoopbackServer: @unchecked Sendable {
    let group: EventLoopGroup
    let server: MockHTTP2Server
    let handler: RecordingHandler
    let stats = MockStatsRecorder<TestStats>(recordLimit: 0)

    init(
        _ configure: (inout MockServerSettings) -> Void = { _ in },
        answer: @escaping @Sendable (MockRequest) -> MockResponse = { request in
            .json(200, Array(#"{"path":"\#(request.path)"}"#.utf8))
        }
    ) throws {
        var settings = MockServerSettings()
        configure(&settings)
        handler = RecordingHandler(answer: answer)
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "mock-support-test")
        do {
            server = try MockHTTP2Server(
                settings: settings, commonName: "mock-support-test", handler: handler, events: stats, group: group)
        } catch {
            group.shutdown()
            throw error
        }
        self.group = group
    }

    func h2Client() throws -> H2Client {
        try H2Client.connect(port: server.localPort, caPEM: server.certificatePEM!, loop: group.next())
    }

    func h1Client() throws -> H1Client {
        try H1Client.connect(port: server.localPort, caPEM: server.certificatePEM!, loop: group.next())
    }

    func shutdown() {
        server.close()
        group.shutdown()
    }

    deinit { group.shutdown() }
}

/// A blocking HTTP/1.1-over-TLS client on PushTransport (ALPN http/1.1), one request at a time,
/// for the mock's HTTP/1.1 mode. Loop state is mirrored behind a lock for the test thread.
final class H1Client: HTTP2SessionDelegate, HTTP1ParserDelegate, HTTPTransportOwner, @unchecked Sendable {
    struct Answer: Sendable {
        var status = 0
        var headers: [(name: String, value: String)] = []
        var body: [UInt8] = []
        var keepAlive = true

        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name }?.value }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    private struct State {
        var ready = false
        var closed = false
        var current = Answer()
        var answers: [Answer] = []
    }

    private let loop: EventLoop
    private var transport: HTTPTransport!
    private let state = Locked(State())

    private init(loop: EventLoop) { self.loop = loop }

    static func connect(port: Int, caPEM: String, loop: EventLoop) throws -> H1Client {
        let client = H1Client(loop: loop)
        let tls = try TLSConnection(
            context: TLSContext.client(caPEM: caPEM, alpn: HTTPVersionPolicy.http1.alpn, useSystemRoots: false),
            serverName: "127.0.0.1")
        client.transport = HTTPTransport(
            loop: loop, tls: tls, policy: .http1, http2Settings: .clientDefaults, http2Delegate: client,
            http1Delegate: client, owner: client)
        let failure = Locked<String?>(nil)
        loop.execute {
            client.transport.connect(host: "127.0.0.1", port: port, timeout: .seconds(5)) { result in
                if case .failure(let error) = result { failure.withLock { $0 = "\(error)" } }
            }
        }
        let settled = eventually {
            failure.withLock { $0 != nil } || client.state.withLock { $0.ready || $0.closed }
        }
        if let message = failure.withLock({ $0 }) { throw ClientError("connect failed: \(message)") }
        guard settled, client.state.withLock({ $0.ready }) else { throw ClientError("no TLS handshake") }
        return client
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// Sends one request and waits for its answer.
    func send(method: String = "POST", path: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [])
        throws -> Answer
    {
        let before = state.withLock { $0.answers.count }
        let sent = Locked<String?>(nil)
        loop.execute { [self] in
            guard let session = transport.http1Session, session.canSend else {
                sent.withLock { $0 = "the connection cannot send" }
                return
            }
            var head: [UInt8] = []
            do {
                try HTTP1Writer.requestHead(
                    method: method, target: Array(path.utf8), headers: [("host", "127.0.0.1")] + headers,
                    contentLength: body.count, into: &head)
            } catch {
                sent.withLock { $0 = "\(error)" }
                return
            }
            body.withUnsafeBytes { session.send(head: head, body: $0) }
            transport.setNeedsFlush()
            sent.withLock { $0 = "" }
        }
        guard eventually({ sent.withLock { $0 != nil } }) else { throw ClientError("send timed out") }
        if let problem = sent.withLock({ $0 }), !problem.isEmpty { throw ClientError(problem) }
        guard eventually({ state.withLock { $0.answers.count > before || $0.closed } }),
            let answer = state.withLock({ $0.answers.count > before ? $0.answers[before] : nil })
        else { throw ClientError("no answer") }
        return answer
    }

    func close() {
        loop.execute { [self] in transport.close() }
        _ = eventually(seconds: 5) { isClosed }
    }

    // MARK: Transport (on the loop)

    func transportDidBecomeReady(_ transport: HTTPTransport) { state.withLock { $0.ready = true } }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        state.withLock { $0.closed = true }
    }

    // MARK: HTTP/1.1 answers (on the loop)

    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let field = (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
        state.withLock { $0.current.headers.append(field) }
    }

    func http1HeadersComplete(_ head: HTTP1Head) {
        state.withLock { state in
            state.current.status = head.status
            state.current.keepAlive = head.keepAlive
        }
    }

    func http1Body(_ bytes: UnsafeRawBufferPointer) {
        let chunk = Array(bytes)
        state.withLock { $0.current.body += chunk }
    }

    func http1MessageComplete(keepAlive: Bool) {
        state.withLock { state in
            state.answers.append(state.current)
            state.current = Answer()
        }
    }

    // MARK: HTTP/2 (never chosen: the client offers only http/1.1)

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {}

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {}

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {}
}
