public import PushPosix
import Synchronization

/// A tiny HTTP/1.1 server for scrapers and probes: `GET /metrics` (the registry in the text format
/// 0.0.4) and `GET /healthz` (200 `ok` while serving, 503 once stopping). Other paths get 404, other
/// methods 405. One request per connection (`Connection: close`); the request head is bounded, and
/// a client that does not finish it in time is dropped.
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

/// One HTTP connection: reads a request head, answers once, closes after the answer is written.
/// Confined to its connection's loop.
final class MetricsHTTPConnection: ConnectionHandler {
    private let state: MetricsHTTPState
    private let loop: EventLoop
    private var head: [UInt8] = []
    private var answered = false
    /// The answer went out before the whole request was read (oversized or garbled): closing with
    /// unread input would reset the connection and could destroy the answer before the client reads
    /// it, so keep reading (and dropping) for a moment.
    private var linger = false
    private var timer: TimerID?

    init(connection: Connection, state: MetricsHTTPState) {
        self.state = state
        self.loop = connection.loop
        timer = loop.schedule(after: MetricsHTTPServer.requestTimeout) { [weak self, weak connection] in
            self?.timer = nil
            connection?.close(flushFirst: false)
        }
    }

    func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
        guard !answered else { return }
        head.append(contentsOf: bytes)
        let end = Self.endOfHead(head)
        if (end ?? head.count) > MetricsHTTPServer.maxRequestHeadBytes {
            linger = true
            answer(431, "Request Header Fields Too Large", body: "request head too large\n", on: connection)
        } else if let end {
            respond(to: head[..<end], on: connection)
        }
    }

    func connectionDidDrain(_ connection: Connection) {
        guard answered else { return }
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

    private func respond(to head: ArraySlice<UInt8>, on connection: Connection) {
        let lineEnd = head.firstIndex(of: UInt8(ascii: "\r")) ?? head.endIndex
        let parts = head[..<lineEnd].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].starts(with: Array("HTTP/1.".utf8)), parts[1].first == UInt8(ascii: "/")
        else {
            linger = true
            answer(400, "Bad Request", body: "bad request\n", on: connection)
            return
        }
        let method = String(decoding: parts[0], as: UTF8.self)
        var target = parts[1]
        if let query = target.firstIndex(of: UInt8(ascii: "?")) { target = target[..<query] }
        let path = String(decoding: target, as: UTF8.self)
        guard path == "/metrics" || path == "/healthz" else {
            answer(404, "Not Found", body: "not found\n", on: connection)
            return
        }
        guard method == "GET" else {
            answer(
                405, "Method Not Allowed", body: "method not allowed\n", extraHeaders: "Allow: GET\r\n", on: connection)
            return
        }
        if path == "/metrics" {
            answer(200, "OK", body: state.registry.render(), contentType: MetricsRegistry.contentType, on: connection)
        } else if state.stopping.load(ordering: .relaxed) {
            answer(503, "Service Unavailable", body: "stopping\n", on: connection)
        } else {
            answer(200, "OK", body: "ok\n", on: connection)
        }
    }

    private func answer(
        _ status: Int, _ phrase: String, body: String, contentType: String = "text/plain; charset=utf-8",
        extraHeaders: String = "", on connection: Connection
    ) {
        answered = true
        head = []
        let bodyBytes = Array(body.utf8)
        let response =
            "HTTP/1.1 \(status) \(phrase)\r\nContent-Type: \(contentType)\r\n"
            + "Content-Length: \(bodyBytes.count)\r\n\(extraHeaders)Connection: close\r\n\r\n"
        connection.write(Array(response.utf8) + bodyBytes)
        // Closed once the kernel has taken it all (connectionDidDrain).
    }

    /// The index just past the blank line that ends the head (CRLF CRLF, or LF LF), or nil.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0A {
                if index + 1 < bytes.count && bytes[index + 1] == 0x0A { return index + 2 }
                if index + 2 < bytes.count && bytes[index + 1] == 0x0D && bytes[index + 2] == 0x0A { return index + 3 }
            }
            index += 1
        }
        return nil
    }
}
