import Glibc
public import PushCore
public import PushHTTP2
public import PushPosix
import PushSync
import PushTLS
public import PushTransport

/// Polls `condition` every millisecond until it holds or `seconds` pass.
public func eventually(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    let deadline = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 + seconds
    while !condition() {
        clock_gettime(CLOCK_MONOTONIC, &ts)
        if Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 > deadline { return false }
        usleep(1000)
    }
    return true
}

public struct ClientError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One HTTP request: method, path, extra headers, body.
public struct H2Request: Sendable {
    public var method = "POST"
    public var path: String
    public var headers: [(String, String)] = []
    public var body: [UInt8] = []

    public init(method: String = "POST", path: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response: status, headers, the body (all DATA frames), and what ended the stream.
public struct H2Response: Sendable {
    public var headers: [HTTP2Header] = []
    public var body: [UInt8] = []
    public var closed = false
    public var resetCode: HTTP2ErrorCode?

    public func header(_ name: String) -> String? { headers.first { $0.nameString == name }?.valueString }
    public var status: Int? { header(":status").flatMap { Int($0) } }
    public var json: JSONValue? { try? JSONParser.parse(body) }
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body's top-level member `name` when it is a string.
    public func jsonString(_ name: String) -> String? {
        if case .string(let value)? = json?[name] { return value }
        return nil
    }

    /// An OAuth2 token-endpoint error's `error` and `error_description` (RFC 6749 §5.2).
    public var oauthError: String? { jsonString("error") }
    public var oauthDescription: String? { jsonString("error_description") }
}

/// A blocking HTTP/2-over-TLS client on PushTransport (client role), so tests talk to a mock
/// through the same transport the gateway uses. Loop state is mirrored behind a lock for the
/// test thread.
public final class H2Client: HTTP2SessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    private struct State {
        var responses: [Int32: H2Response] = [:]
        var serverMaxStreams: UInt32?
        var goAwayLastStreamID: Int32?
        var closed = false
    }

    public let authority: String
    private let loop: EventLoop
    private var transport: HTTPTransport!
    private let state = Locked(State())

    private init(loop: EventLoop, authority: String) {
        self.loop = loop
        self.authority = authority
    }

    /// Connects to 127.0.0.1:`port` trusting `caPEM` (nil: cleartext h2c with prior knowledge)
    /// and waits for the server's SETTINGS.
    public static func connect(port: Int, caPEM: String?, loop: EventLoop, serverName: String = "127.0.0.1") throws
        -> H2Client
    {
        let client = H2Client(loop: loop, authority: "\(serverName):\(port)")
        let tls = try caPEM.map { caPEM in
            try TLSConnection(context: TLSContext.client(caPEM: caPEM, useSystemRoots: false), serverName: serverName)
        }
        client.transport = try HTTPTransport(
            loop: loop, tls: tls, role: .client, settings: .clientDefaults, sessionDelegate: client, owner: client)
        let failure = Locked<String?>(nil)
        client.transport.connect(host: "127.0.0.1", port: port, timeout: .seconds(5)) { result in
            if case .failure(let error) = result { failure.withLock { $0 = "\(error)" } }
        }
        let settled = eventually {
            failure.withLock { $0 != nil } || client.state.withLock { $0.closed || $0.serverMaxStreams != nil }
        }
        if let message = failure.withLock({ $0 }) { throw ClientError("connect failed: \(message)") }
        guard settled, client.serverMaxStreams != nil else { throw ClientError("no SETTINGS from the server") }
        return client
    }

    public var serverMaxStreams: UInt32? { state.withLock { $0.serverMaxStreams } }
    public var goAwayLastStreamID: Int32? { state.withLock { $0.goAwayLastStreamID } }
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Submits every request in one loop turn (so they are in flight together) and waits for
    /// all the answers, in request order.
    public func send(_ requests: [H2Request], seconds: Double = 10) throws -> [H2Response] {
        try wait(for: submit(requests), seconds: seconds)
    }

    /// Submits every request in one loop turn and returns their stream ids without waiting.
    public func submit(_ requests: [H2Request]) throws -> [Int32] {
        let submitted = Locked<Result<[Int32], HTTP2Error>?>(nil)
        loop.execute { [self] in
            do throws(HTTP2Error) {
                var ids: [Int32] = []
                for request in requests {
                    let headers =
                        [
                            HTTP2Header(":method", request.method), HTTP2Header(":scheme", "https"),
                            HTTP2Header(":path", request.path), HTTP2Header(":authority", authority),
                        ] + request.headers.map { HTTP2Header($0.0, $0.1) }
                    ids.append(
                        try transport.session.submitRequest(
                            headers: headers, body: request.body.isEmpty ? nil : request.body))
                }
                state.withLock { s in
                    for id in ids { s.responses[id] = s.responses[id] ?? H2Response(closed: s.closed) }
                }
                submitted.withLock { $0 = .success(ids) }
            } catch {
                submitted.withLock { $0 = .failure(error) }
            }
            transport.setNeedsFlush()
        }
        guard eventually({ submitted.withLock { $0 != nil } }) else { throw ClientError("submit timed out") }
        return try submitted.withLock { $0! }.get()
    }

    /// Waits for the streams `ids` to finish; their answers, in order.
    public func wait(for ids: [Int32], seconds: Double = 10) throws -> [H2Response] {
        guard
            eventually(seconds: seconds, { state.withLock { s in ids.allSatisfy { s.responses[$0]?.closed == true } } })
        else {
            throw ClientError("streams did not finish")
        }
        return state.withLock { s in ids.map { s.responses[$0]! } }
    }

    public func send(_ request: H2Request) throws -> H2Response { try send([request])[0] }

    /// What has arrived so far on stream `id`.
    public func response(_ id: Int32) -> H2Response? { state.withLock { $0.responses[id] } }

    /// Stops reading the socket (a client that does not read its answers), or starts again.
    public func setReading(_ reading: Bool) {
        loop.execute { [self] in
            if reading { transport.connection?.resumeReading() } else { transport.connection?.pauseReading() }
        }
    }

    public func close() {
        loop.execute { [self] in transport.close() }
        _ = eventually(seconds: 5) { isClosed }
    }

    // MARK: Delegate (on the loop)

    public func transportDidBecomeReady(_ transport: HTTPTransport) {}

    public func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        state.withLock { s in
            s.closed = true
            for id in s.responses.keys { s.responses[id]!.closed = true }
        }
    }

    override public func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        state.withLock { $0.responses[streamID, default: H2Response()].headers += headers }
    }

    override public func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        let bytes = Array(data)
        state.withLock { $0.responses[streamID, default: H2Response()].body += bytes }
    }

    override public func http2Session(
        _ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode
    ) {
        state.withLock { s in
            s.responses[streamID, default: H2Response()].closed = true
            if errorCode != .noError { s.responses[streamID]!.resetCode = errorCode }
        }
    }

    override public func http2SessionDidReceiveSettings(_ session: HTTP2Session) {
        let limit = session.remoteMaxConcurrentStreams
        state.withLock { $0.serverMaxStreams = limit }
    }

    override public func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {
        state.withLock { $0.goAwayLastStreamID = lastStreamID }
    }
}

/// Wall-clock seconds since the epoch.
public func wallSeconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec)
}

/// Monotonic seconds, for measuring how long something took.
public func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
