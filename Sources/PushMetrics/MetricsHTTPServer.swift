import PushHTTP1
public import PushPosix
import Synchronization

/// A tiny HTTP/1.1 server for scrapers and probes: `GET /metrics` (the registry in the text format
/// 0.0.4) and `GET /healthz` (200 `ok` while serving, 503 once stopping). Other paths get 404, other
/// methods 405. One request per connection (`Connection: close`), read by PushHTTP1's session over
/// libhttp-parser; the request head is bounded, and a client that does not finish it in time is dropped.
///
/// Runs on the loops of a ``PushPosix/EventLoopGroup`` through a ``PushPosix/TCPServer``.
public final class MetricsHTTPServer: Sendable {
    /// The largest request head (request line and headers) read; larger gets 431.
    public static let maxRequestHeadBytes = 8192
    /// How long a client may take to send its request head.
    public static let requestTimeout: Duration = .seconds(10)
    /// How long input is read and dropped after answering a request that was not read whole.
    static let lingerTime: Duration = .milliseconds(500)

    private let listener: TCPServer
    private let state: MetricsHTTPState

    /// Binds `host:port` (port 0 picks one; see ``localPort``) and starts serving `registry`.
    public init(host: String, port: Int, group: EventLoopGroup, registry: MetricsRegistry) throws {
        let state = MetricsHTTPState(registry: registry)
        self.state = state
        listener = try TCPServer.listen(host: host, port: port, group: group) { connection in
            MetricsHTTPConnection(connection: connection, state: state)
        }
    }

    /// The port actually bound.
    public var localPort: Int { listener.localPort }

    /// From now on `/healthz` answers 503 (the process is stopping); `/metrics` still answers.
    public func setStopping() {
        state.stopping.store(true, ordering: .relaxed)
    }

    /// Stops accepting connections.
    public func close() {
        listener.close()
    }
}

final class MetricsHTTPState: Sendable {
    let registry: MetricsRegistry
    let stopping = Atomic<Bool>(false)

    init(registry: MetricsRegistry) {
        self.registry = registry
    }
}

/// One HTTP connection: one request read by an ``HTTP1ServerSession`` (libhttp-parser), answered
/// once (`Connection: close`), closed after the answer is written. Confined to its connection's loop.
final class MetricsHTTPConnection: ConnectionHandler, HTTP1ServerSessionDelegate {
    private let state: MetricsHTTPState
    private let loop: EventLoop
    private let session = HTTP1ServerSession(maxBodyBytes: 0)
    /// Bytes received before the request's head was complete.
    private var headBytes = 0
    private var headComplete = false
    private var headTooLarge = false
    private var answered = false
    /// The answer went out before the whole request was read (oversized or garbled): closing with
    /// unread input would reset the connection and could destroy the answer before the client reads
    /// it, so keep reading (and dropping) for a moment.
    private var linger = false
    private var timer: TimerID?

    init(connection: Connection, state: MetricsHTTPState) {
        self.state = state
        self.loop = connection.loop
        session.delegate = self
        timer = loop.schedule(after: MetricsHTTPServer.requestTimeout) { [weak self, weak connection] in
            self?.timer = nil
            connection?.close(flushFirst: false)
        }
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        guard !answered else { return }
        if !headComplete { headBytes += bytes.count }
        try? session.receive(bytes)
        if !headComplete && !answered {
            if session.failure != nil {
                // The session answered 400 with the parser's reason.
                answered = true
                linger = true
            } else if headBytes > MetricsHTTPServer.maxRequestHeadBytes {
                answered = true
                linger = true
                answer(0, 431, "Request Header Fields Too Large", body: "request head too large\n")
            }
        }
        write(to: connection)
    }

    func connectionDidDrain(_ connection: Connection) {
        guard answered, !session.wantsWrite else { return }
        guard linger else {
            connection.close()
            return
        }
        if let timer { loop.cancelTimer(timer) }
        timer = loop.schedule(after: MetricsHTTPServer.lingerTime) { [weak self, weak connection] in
            self?.timer = nil
            connection?.close(flushFirst: false)
        }
    }

    func connectionDidClose(_ connection: Connection, error: IOError?) {
        if let timer { loop.cancelTimer(timer) }
        timer = nil
    }

    private func write(to connection: Connection) {
        guard session.wantsWrite else { return }
        var out: [UInt8] = []
        while session.drainOutput(into: &out) > 0 {}
        connection.write(out)
        // Closed once the kernel has taken it all (connectionDidDrain).
    }

    // MARK: HTTP1ServerSessionDelegate

    func http1Session(_ session: HTTP1ServerSession, bodyLimitFor request: HTTP1Request) -> Int {
        headComplete = true
        // The head's size as sent (request line, fields, line ends): it may have come in one read.
        let size = request.headers.reduce(request.method.utf8.count + request.target.utf8.count + 13) {
            $0 + $1.name.utf8.count + $1.value.utf8.count + 4
        }
        headTooLarge = size > MetricsHTTPServer.maxRequestHeadBytes
        return 0
    }

    func http1Session(_ session: HTTP1ServerSession, didReceive request: HTTP1Request) {
        guard !answered else { return }
        answered = true
        let sequence = request.sequence
        guard !headTooLarge else {
            answer(sequence, 431, "Request Header Fields Too Large", body: "request head too large\n")
            return
        }
        let path = String(request.target.prefix { $0 != "?" })
        guard path == "/metrics" || path == "/healthz" else {
            answer(sequence, 404, "Not Found", body: "not found\n")
            return
        }
        guard request.method == "GET" else {
            answer(sequence, 405, "Method Not Allowed", body: "method not allowed\n", extraHeaders: [("Allow", "GET")])
            return
        }
        if path == "/metrics" {
            answer(sequence, 200, "OK", body: state.registry.render(), contentType: MetricsRegistry.contentType)
        } else if state.stopping.load(ordering: .relaxed) {
            answer(sequence, 503, "Service Unavailable", body: "stopping\n")
        } else {
            answer(sequence, 200, "OK", body: "ok\n")
        }
    }

    private func answer(
        _ sequence: Int, _ status: Int, _ phrase: String, body: String,
        contentType: String = "text/plain; charset=utf-8",
        extraHeaders: [(name: String, value: String)] = []
    ) {
        // One request per connection: the answer says Connection: close.
        session.closeAfter(sequence: sequence)
        try? session.respond(
            to: sequence, status: status, reason: phrase, headers: [("Content-Type", contentType)] + extraHeaders,
            body: Array(body.utf8))
    }
}
