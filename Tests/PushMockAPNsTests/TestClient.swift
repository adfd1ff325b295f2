import Glibc
import PushCore
import PushHTTP2
import PushMockAPNs
import PushPosix
import PushSync
import PushTLS
import PushTransport

/// Polls `condition` every millisecond until it holds or `seconds` pass.
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while !condition() {
        if monotonicSeconds() > deadline { return false }
        usleep(1000)
    }
    return true
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func wallSeconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec)
}

let sampleToken = String(repeating: "ab12", count: 16)
let samplePayload = Array(#"{"aps":{"alert":"hello"}}"#.utf8)

/// An APNs request as a test builds it.
struct TestRequest: Sendable {
    var headers: [HTTP2Header]
    var body: [UInt8]?

    /// A valid alert push; tweak the fields or headers to make it invalid.
    static func push(
        token: String = sampleToken, topic: String? = "com.example.app", method: String = "POST",
        path: String? = nil, extra: [(String, String)] = [], body: [UInt8]? = samplePayload,
        authorization: String? = nil
    ) -> TestRequest {
        var headers = [
            HTTP2Header(":method", method), HTTP2Header(":scheme", "https"),
            HTTP2Header(":path", path ?? "/3/device/\(token)"), HTTP2Header(":authority", "api.push.apple.com"),
        ]
        if let authorization { headers.append(HTTP2Header("authorization", "bearer \(authorization)")) }
        if let topic { headers.append(HTTP2Header("apns-topic", topic)) }
        for (name, value) in extra { headers.append(HTTP2Header(name, value)) }
        return TestRequest(headers: headers, body: body)
    }
}

/// What arrived on one stream.
struct TestResponse: Sendable {
    var streamID: Int32 = 0
    var headers: [HTTP2Header] = []
    /// HEADERS blocks received, and whether the (last) one carried END_STREAM.
    var headerBlocks = 0
    var headersEndStream = false
    /// Non-empty DATA chunks, and whether an END_STREAM arrived on DATA.
    var dataChunks: [[UInt8]] = []
    var dataEndStream = false
    var closed = false
    var closeCode: HTTP2ErrorCode?

    func header(_ name: String) -> String? {
        headers.first { $0.nameString == name }?.valueString
    }
    var status: Int? { header(":status").flatMap { Int($0) } }
    var body: [UInt8] { dataChunks.flatMap { $0 } }
    var json: JSONValue? { try? JSONParser.parse(body) }
    var reason: String? {
        if case .string(let reason)? = json?["reason"] { return reason }
        return nil
    }
}

/// A small HTTP/2-over-TLS client on PushTransport, for driving the mock from tests. Its state
/// is written on the loop and read by the test thread, behind a lock.
final class TestClient: HTTP2SessionDelegate, HTTPTransportOwner, @unchecked Sendable {
    struct State {
        var responses: [Int32: TestResponse] = [:]
        var settingsHistory: [UInt32] = []
        var goAway: (lastStreamID: Int32, code: HTTP2ErrorCode, debugData: [UInt8])?
        var ready = false
        var closed = false
        var closeError: String?
    }

    let loop: EventLoop
    private(set) var transport: HTTPTransport!
    private let state = Locked(State())

    private init(loop: EventLoop) { self.loop = loop }

    /// Connects over TLS (trusting `caPEM`) and waits for the server's first SETTINGS.
    static func connect(port: Int, caPEM: String, loop: EventLoop) throws -> TestClient {
        let client = TestClient(loop: loop)
        let tls = try TLSConnection(
            context: TLSContext.client(caPEM: caPEM, useSystemRoots: false), serverName: "127.0.0.1")
        client.transport = try HTTPTransport(
            loop: loop, tls: tls, role: .client, settings: .clientDefaults, sessionDelegate: client, owner: client)
        let failure = Locked<String?>(nil)
        client.transport.connect(host: "127.0.0.1", port: port, timeout: .seconds(5)) { result in
            if case .failure(let error) = result { failure.withLock { $0 = "\(error)" } }
        }
        let ok = waitUntil {
            failure.withLock { $0 != nil } || client.snapshot.closed || !client.snapshot.settingsHistory.isEmpty
        }
        if let message = failure.withLock({ $0 }) { throw TestFailure("connect failed: \(message)") }
        guard ok, !client.snapshot.settingsHistory.isEmpty else {
            throw TestFailure("no SETTINGS from the server (closed: \(client.snapshot.closeError ?? "-"))")
        }
        return client
    }

    var snapshot: State { state.withLock { $0 } }
    var settingsHistory: [UInt32] { snapshot.settingsHistory }

    /// Submits all requests in one loop turn; returns their stream ids.
    func submit(_ requests: [TestRequest]) throws -> [Int32] {
        let result = Locked<Result<[Int32], HTTP2Error>?>(nil)
        loop.execute { [self] in
            do throws(HTTP2Error) {
                var ids: [Int32] = []
                for request in requests {
                    ids.append(try transport.session.submitRequest(headers: request.headers, body: request.body))
                }
                state.withLock { s in
                    for id in ids where s.responses[id] == nil {
                        s.responses[id] = TestResponse(streamID: id, closed: s.closed)
                    }
                }
                result.withLock { $0 = .success(ids) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            transport.setNeedsFlush()
        }
        guard waitUntil({ result.withLock { $0 != nil } }) else { throw TestFailure("submit timed out") }
        return try result.withLock { $0! }.get()
    }

    /// Waits until every stream in `ids` has closed; returns their responses in order.
    func wait(for ids: [Int32], seconds: Double = 10) throws -> [TestResponse] {
        let done = waitUntil(seconds: seconds) {
            state.withLock { s in ids.allSatisfy { s.responses[$0]?.closed == true } }
        }
        guard done else {
            let missing = state.withLock { s in ids.filter { s.responses[$0]?.closed != true } }
            throw TestFailure("streams \(missing) did not finish")
        }
        return state.withLock { s in ids.map { s.responses[$0]! } }
    }

    func send(_ requests: [TestRequest], seconds: Double = 10) throws -> [TestResponse] {
        try wait(for: try submit(requests), seconds: seconds)
    }

    func send(_ request: TestRequest) throws -> TestResponse {
        try send([request])[0]
    }

    func waitForClose(seconds: Double = 10) -> Bool {
        waitUntil(seconds: seconds) { snapshot.closed }
    }

    func close() {
        loop.execute { [self] in transport.close() }
        _ = waitForClose(seconds: 5)
    }

    // MARK: Delegate

    func transportDidBecomeReady(_ transport: HTTPTransport) {
        state.withLock { $0.ready = true }
    }

    func transport(_ transport: HTTPTransport, didCloseWith error: (any Error)?) {
        state.withLock { s in
            s.closed = true
            s.closeError = error.map { "\($0)" }
            for id in s.responses.keys where !s.responses[id]!.closed { s.responses[id]!.closed = true }
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveHeaders headers: [HTTP2Header], streamID: Int32, endStream: Bool
    ) {
        state.withLock { s in
            s.responses[streamID, default: TestResponse(streamID: streamID)].headers += headers
            s.responses[streamID]!.headerBlocks += 1
            s.responses[streamID]!.headersEndStream = endStream
        }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveData data: UnsafeRawBufferPointer, streamID: Int32, endStream: Bool
    ) {
        let bytes = Array(data)
        state.withLock { s in
            if !bytes.isEmpty {
                s.responses[streamID, default: TestResponse(streamID: streamID)].dataChunks.append(bytes)
            }
            if endStream { s.responses[streamID, default: TestResponse(streamID: streamID)].dataEndStream = true }
        }
    }

    override func http2Session(_ session: HTTP2Session, streamDidClose streamID: Int32, errorCode: HTTP2ErrorCode) {
        state.withLock { s in
            s.responses[streamID, default: TestResponse(streamID: streamID)].closed = true
            s.responses[streamID]!.closeCode = errorCode
        }
    }

    override func http2SessionDidReceiveSettings(_ session: HTTP2Session) {
        let limit = session.remoteMaxConcurrentStreams
        state.withLock { $0.settingsHistory.append(limit) }
    }

    override func http2Session(
        _ session: HTTP2Session, didReceiveGoAway lastStreamID: Int32, errorCode: HTTP2ErrorCode, debugData: [UInt8]
    ) {
        state.withLock { $0.goAway = (lastStreamID, errorCode, debugData) }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A server plus one loop group, torn down together.
final class Harness: @unchecked Sendable {
    let group: EventLoopGroup
    let server: MockAPNsServer
    private var clients: [TestClient] = []

    init(_ configure: (inout MockAPNsConfiguration) -> Void = { _ in }) throws {
        var configuration = MockAPNsConfiguration.defaults
        configure(&configuration)
        group = try EventLoopGroup(loopCount: 2, namePrefix: "mock-test")
        do {
            server = try MockAPNsServer(configuration: configuration, group: group)
        } catch {
            group.shutdown()
            throw error
        }
    }

    func client() throws -> TestClient {
        let client = try TestClient.connect(port: server.localPort, caPEM: server.certificatePEM!, loop: group.next())
        clients.append(client)
        return client
    }

    func shutdown() {
        server.close()
        group.shutdown()
    }

    deinit { group.shutdown() }
}
