import PushHTTP1
import PushHTTP2
import PushPosix
import PushSync
import PushTLS
import PushTransport

/// The identity every loopback server of these tests presents: a self-signed P-256 certificate
/// for 127.0.0.1 and localhost that is its own trust anchor.
let loopbackIdentity = try! SelfSignedCertificate.generate(
    commonName: "PushTransportTests", subjectAltNames: ["127.0.0.1", "localhost"])

/// A client context that trusts ``loopbackIdentity`` (only) and offers `alpn`.
func clientContext(alpn: [String]) throws -> TLSContext {
    try TLSContext.client(caPEM: loopbackIdentity.certificatePEM, alpn: alpn, useSystemRoots: false)
}

/// Runs `body` on `loop` and answers what it returns (nil if the loop is shut down).
func onLoop<T: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> T) async -> T? {
    await withCheckedContinuation { continuation in
        if !loop.tryExecute({ continuation.resume(returning: body()) }) { continuation.resume(returning: nil) }
    }
}

// MARK: - Server

/// One request as a ``TestServer`` saw it.
struct SeenRequest: Sendable {
    var version: HTTPVersion
    var method = ""
    var path = ""
    /// `:authority`, or HTTP/1.1's `Host`.
    var authority = ""
    /// The other fields, names lowercased.
    var headers: [(name: String, value: String)] = []
    var body: [UInt8] = []

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
}

/// A small HTTP server made of this module's own server side: ``HTTPListener`` and a server-role
/// ``HTTPTransport`` per connection, speaking `version` over TLS (offering only that version's
/// ALPN protocol, with ``loopbackIdentity``) or cleartext (HTTP/2 with prior knowledge). Every
/// request is recorded and answered 200 with `x-served-by` (`h2` or `http/1.1`) and `answer` as
/// the body. `alpn` overrides what the TLS context offers (a misconfigured server). The first
/// `failingConnections` connections are refused by `serve` throwing.
final class TestServer: Sendable {
    private let listener: TCPServer
    private let state: Locked<State>

    private struct State {
        var requests: [SeenRequest] = []
        var connections = 0
        var closeErrors: [String] = []
    }

    init(
        _ version: HTTPVersion, tls: Bool = true, group: EventLoopGroup, answer: [UInt8] = Array("hello".utf8),
        alpn: [String]? = nil, failingConnections: Int = 0
    ) throws {
        let context =
            tls
            ? try TLSContext.server(
                certificatePEM: loopbackIdentity.certificatePEM, privateKeyPEM: loopbackIdentity.privateKeyPEM,
                alpn: alpn ?? [version == .http2 ? "h2" : "http/1.1"]) : nil
        let state = Locked(State())
        self.state = state
        listener = try HTTPListener.listen(host: "127.0.0.1", port: 0, group: group) { connection in
            let number = state.withLock { s -> Int in
                s.connections += 1
                return s.connections
            }
            if number <= failingConnections { throw TransportError("connection \(number) refused by the test") }
            let tls = try context.map { try TLSConnection(context: $0) }
            let transport: HTTPTransport
            switch version {
            case .http2:
                let responder = HTTP2Responder(state: state, answer: answer)
                transport = try HTTPTransport(
                    loop: connection.loop, tls: tls, role: .server, settings: .serverDefaults,
                    sessionDelegate: responder, owner: responder)
                responder.transport = transport
            case .http1:
                let responder = HTTP1Responder(state: state, answer: answer)
                transport = HTTPTransport(
                    loop: connection.loop, tls: tls, http1Server: responder.session, owner: responder)
                responder.transport = transport
            }
            transport.attach(connection)
            return transport
        }
    }

    var port: Int { listener.localPort }
    var requests: [SeenRequest] { state.withLock { $0.requests } }
    /// Connections accepted (the refused ones too).
    var connections: Int { state.withLock { $0.connections } }
    /// Why server-side transports closed, for those that closed with an error.
    var closeErrors: [String] { state.withLock { $0.closeErrors } }

    func close() { listener.close() }

    /// Answers HTTP/2 requests once their stream's END_STREAM arrives.
    private final class HTTP2Responder: HTTP2SessionDelegate, HTTPTransportOwner {
        let state: Locked<State>
        let answer: [UInt8]
        var transport: HTTPTransport!
        private var open: [Int32: SeenRequest] = [:]

        init(state: Locked<State>, answer: [UInt8]) {
            self.state = state
            self.answer = answer
        }

        override func http2Session(
            _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
        ) {
            var request = open[streamID] ?? SeenRequest(version: .http2)
            for header in headers {
                switch header.nameString {
                case ":method": request.method = header.valueString
                case ":path": request.path = header.valueString
                case ":authority": request.authority = header.valueString
                case let name where name.hasPrefix(":"): break
                case let name: request.headers.append((name, header.valueString))
                }
            }
            open[streamID] = request
            if endStream { respond(streamID, session) }
        }

        override func http2Session(
            _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
        ) {
            open[streamID]?.body.append(contentsOf: data)
            if endStream { respond(streamID, session) }
        }

        override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
            open[streamID] = nil
        }

        private func respond(_ streamID: Int32, _ session: HTTP2Session) {
            guard let request = open[streamID] else { return }
            state.withLock { $0.requests.append(request) }
            try? session.sendResponseHeaders(
                streamID: streamID, headers: [HTTP2Header(":status", "200"), HTTP2Header("x-served-by", "h2")],
                endStream: false)
            try? session.sendData(streamID: streamID, answer, endStream: true)
            transport.setNeedsFlush()
        }

        func transportDidBecomeReady(_ transport: HTTPTransport) {}

        func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
            if let error { state.withLock { $0.closeErrors.append("\(error)") } }
        }
    }

    /// Answers each HTTP/1.1 request as it is read.
    private final class HTTP1Responder: HTTP1ServerSessionDelegate, HTTPTransportOwner {
        let state: Locked<State>
        let answer: [UInt8]
        let session = HTTP1ServerSession()
        var transport: HTTPTransport!

        init(state: Locked<State>, answer: [UInt8]) {
            self.state = state
            self.answer = answer
            session.delegate = self
        }

        func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
            var seen = SeenRequest(version: .http1, method: request.method, path: request.target, body: request.body)
            for (name, value) in request.headers {
                if name == "host" { seen.authority = value } else { seen.headers.append((name, value)) }
            }
            state.withLock { $0.requests.append(seen) }
            try? session.respond(
                to: request.sequence, status: 200, reason: "OK", headers: [("x-served-by", "http/1.1")], body: answer)
            transport.setNeedsFlush()
        }

        func transportDidBecomeReady(_ transport: HTTPTransport) {}

        func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
            if let error { state.withLock { $0.closeErrors.append("\(error)") } }
        }
    }
}

// MARK: - Client

/// The owner of one client ``HTTPTransport``, HTTP/2 or HTTP/1.1 session delegate too: what the
/// transport reports (the connect result, readiness and the version then, the close and its
/// error, answers, flushes) mirrored behind a lock for the test thread. Confined to `loop`
/// otherwise, hence `@unchecked Sendable`.
final class ClientProbe: HTTP2SessionDelegate, HTTP1ParserDelegate, HTTPTransportOwner, @unchecked Sendable {
    struct Answer: Sendable {
        var status = 0
        var servedBy: String?
        var body: [UInt8] = []
    }

    struct State: Sendable {
        /// "ok" or the connect failure.
        var connectResult: String?
        var readyCount = 0
        /// ``HTTPTransport/version`` when the transport became ready.
        var versionWhenReady: HTTPVersion?
        var closeCount = 0
        var closeError: String?
        var answers: [Answer] = []
        var flushes = 0
    }

    let loop: EventLoop
    private(set) var transport: HTTPTransport!
    let state = Locked(State())
    /// `:scheme` of the HTTP/2 requests.
    private let scheme: String
    private var current = Answer()

    /// A client over TLS offering what `policy` allows, the version chosen by ALPN.
    init(loop: EventLoop, policy: HTTPVersionPolicy, context: TLSContext? = nil) throws {
        self.loop = loop
        scheme = "https"
        super.init()
        let tls = try TLSConnection(context: context ?? clientContext(alpn: policy.alpn), serverName: "127.0.0.1")
        transport = HTTPTransport(
            loop: loop, tls: tls, policy: policy, http2Settings: .clientDefaults, http2Delegate: self,
            http1Delegate: self, owner: self)
        transport.onFlushed = { [unowned self] in state.withLock { $0.flushes += 1 } }
    }

    /// A cleartext HTTP/2 client (prior knowledge: no upgrade, no ALPN).
    init(cleartextHTTP2Loop loop: EventLoop) throws {
        self.loop = loop
        scheme = "http"
        super.init()
        transport = try HTTPTransport(
            loop: loop, tls: nil, role: .client, settings: .clientDefaults, sessionDelegate: self, owner: self)
        transport.onFlushed = { [unowned self] in state.withLock { $0.flushes += 1 } }
    }

    var snapshot: State { state.withLock { $0 } }

    /// Connects from the loop; the result lands in ``State/connectResult``.
    func connect(port: Int, proxy: HTTPProxy? = nil, timeout: Duration = .seconds(5)) {
        loop.execute { [self] in
            transport.connect(host: "127.0.0.1", port: port, timeout: timeout, proxy: proxy) { [self] result in
                state.withLock { s in
                    switch result {
                    case .success: s.connectResult = "ok"
                    case .failure(let error): s.connectResult = "\(error)"
                    }
                }
            }
        }
    }

    /// Sends `GET path` in whichever version the transport carries (from the loop).
    func get(_ path: String) {
        loop.execute { [self] in
            submitGet(path)
            transport.setNeedsFlush()
        }
    }

    /// Loop thread: submits `GET path` without flushing.
    func submitGet(_ path: String) {
        if let http1 = transport.http1Session {
            var head: [UInt8] = []
            try! HTTP1Writer.requestHead(
                method: "GET", target: Array(path.utf8), headers: [("Host", "127.0.0.1")], contentLength: 0,
                into: &head)
            [UInt8]().withUnsafeBytes { http1.send(head: head, body: $0) }
        } else {
            _ = try! transport.session.submitRequest(
                headers: [
                    HTTP2Header(":method", "GET"), HTTP2Header(":scheme", scheme),
                    HTTP2Header(":path", path), HTTP2Header(":authority", "127.0.0.1"),
                ], body: nil)
        }
    }

    // MARK: HTTPTransportOwner

    func transportDidBecomeReady(_ transport: HTTPTransport) {
        state.withLock { s in
            s.readyCount += 1
            s.versionWhenReady = transport.version
        }
    }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        state.withLock { s in
            s.closeCount += 1
            s.closeError = error.map { "\($0)" }
        }
    }

    // MARK: HTTP/2 answers

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        for header in headers {
            if header.nameString == ":status" { current.status = Int(header.valueString) ?? -1 }
            if header.nameString == "x-served-by" { current.servedBy = header.valueString }
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        current.body.append(contentsOf: data)
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        finishAnswer()
    }

    // MARK: HTTP/1.1 answers

    func http1Header(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        if String(decoding: name, as: UTF8.self).lowercased() == "x-served-by" {
            current.servedBy = String(decoding: value, as: UTF8.self)
        }
    }

    func http1HeadersComplete(_ head: HTTP1Head) { current.status = head.status }

    func http1Body(_ bytes: UnsafeRawBufferPointer) { current.body.append(contentsOf: bytes) }

    func http1MessageComplete(keepAlive: Bool) { finishAnswer() }

    private func finishAnswer() {
        let answer = current
        current = Answer()
        state.withLock { $0.answers.append(answer) }
    }
}

// MARK: - CONNECT proxy

/// A small HTTP CONNECT proxy on loopback (the Swift side of what Tests/interop/connect_proxy.py
/// does for the interop suite): it records each request head, then, as `behaviour` says, opens the
/// tunnel and relays bytes both ways, answers with a refusal status, or closes without a word.
final class ConnectProxy: Sendable {
    enum Behaviour: Sendable {
        case tunnel
        case refuse(status: Int)
        case hangUp
    }

    private let listener: TCPServer
    private let heads: Locked<[String]>

    init(_ behaviour: Behaviour, group: EventLoopGroup) throws {
        let heads = Locked<[String]>([])
        self.heads = heads
        listener = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in
            ProxyClientSide(behaviour: behaviour, heads: heads)
        }
    }

    var port: Int { listener.localPort }
    /// The request heads received (request line and fields, CRLF-separated, without the blank line).
    var requestHeads: [String] { heads.withLock { $0 } }

    func close() { listener.close() }
}

/// The client's side of one proxied connection.
private final class ProxyClientSide: ConnectionHandler {
    private let behaviour: ConnectProxy.Behaviour
    private let heads: Locked<[String]>
    private var head: [UInt8] = []
    private var tunnelled = false
    private var upstream: Connection?

    init(behaviour: ConnectProxy.Behaviour, heads: Locked<[String]>) {
        self.behaviour = behaviour
        self.heads = heads
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        if tunnelled {
            upstream?.write(bytes)
            return
        }
        head.append(contentsOf: bytes)
        guard let end = head.indices.dropLast(3).first(where: { Array(head[$0..<$0 + 4]) == Array("\r\n\r\n".utf8) })
        else { return }
        let text = String(decoding: head[..<end], as: UTF8.self)
        heads.withLock { $0.append(text) }
        tunnelled = true
        switch behaviour {
        case .hangUp:
            connection.close(flushFirst: false)
        case .refuse(let status):
            connection.write(Array("HTTP/1.1 \(status) Refused by the test\r\nContent-Length: 0\r\n\r\n".utf8))
            connection.close(flushFirst: true)
        case .tunnel:
            // "CONNECT host:port HTTP/1.1"
            let target = text.split(separator: "\r\n").first.map { $0.split(separator: " ") }
            guard let target, target.count == 3, let colon = target[1].lastIndex(of: ":"),
                let port = Int(target[1][target[1].index(after: colon)...])
            else {
                connection.close(flushFirst: false)
                return
            }
            var host = String(target[1][..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            Connection.connect(host: host, port: port, on: connection.loop, handler: ProxyUpstreamSide(connection)) {
                [self] result in
                switch result {
                case .success(let upstream):
                    self.upstream = upstream
                    connection.write(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
                case .failure:
                    connection.write(Array("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n".utf8))
                    connection.close(flushFirst: true)
                }
            }
        }
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        upstream?.close(flushFirst: true)
        upstream = nil
    }
}

/// The target's side of a tunnel: what it sends goes to the client.
private final class ProxyUpstreamSide: ConnectionHandler {
    private var client: Connection?

    init(_ client: Connection) { self.client = client }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        client?.write(bytes)
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        client?.close(flushFirst: true)
        client = nil
    }
}
