import PushCore
import PushPosix
import PushSync
import Testing

@testable import PushGRPC

/// An exchange that records what a call writes; confined to the loop like a real one.
final class RecordingExchange: ConnectExchange, @unchecked Sendable {
    struct Whole: Sendable {
        let status: Int
        let headers: [(name: String, value: String)]
        let body: [UInt8]
        func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    }
    var whole: Whole?
    var streamHeaders: [(name: String, value: String)]?
    var streamed: [UInt8] = []
    var ended = false
    var call: ConnectCall?
    let done: @Sendable () -> Void

    init(done: @escaping @Sendable () -> Void) { self.done = done }

    func respond(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        whole = Whole(status: status, headers: headers, body: body)
        done()
    }
    func beginStream(headers: [(name: String, value: String)]) { streamHeaders = headers }
    func sendStream(_ bytes: [UInt8], end: Bool) {
        streamed += bytes
        if end {
            ended = true
            done()
        }
    }
    var unsentBytes: Int { 0 }
    func waitForDrain(_ call: ConnectCall) {}
}

@Suite("Connect calls: a method's answer written as Connect writes it, without sockets")
struct ConnectCallTests {
    static let json = GRPCJSONTranscoding(
        request: { bytes throws(GRPCStatus) in
            guard bytes.first == UInt8(ascii: "{") else { throw GRPCStatus(.invalidArgument, "x: not JSON") }
            return Array(bytes.dropFirst().dropLast())
        },
        response: { bytes throws(GRPCStatus) in Array("{".utf8) + bytes + Array("}".utf8) })

    /// Runs `method` for one request on a loop and returns what the exchange recorded.
    static func run(
        _ method: GRPCMethod, body: [UInt8], headers: [(String, String)], timeoutMilliseconds: Int? = nil
    ) async throws -> RecordingExchange {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "connect-call")
        defer { group.shutdown() }
        let loop = group.next()
        var all = headers.map { (name: $0.0, value: $0.1) }
        if let timeoutMilliseconds { all.append(("connect-timeout-ms", String(timeoutMilliseconds))) }
        let head = try ConnectRequestHead(method: "POST", path: "/a.B/C", headers: all)
        let budget = GRPCRequestBudget(limit: 1 << 20, owner: "test")
        let exchange = Locked<RecordingExchange?>(nil)
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            loop.execute {
                let recorder = RecordingExchange { finished.resume() }
                exchange.withLock { $0 = recorder }
                let context = GRPCCallContext(
                    path: "/a.B/C", deadline: nil, metadata: head.metadata, peer: "p", isLoopbackPeer: true)
                let call = ConnectCall(
                    exchange: recorder, loop: loop, head: head, method: method.transcodingJSON(json), context: context,
                    maxMessageSize: 1000, budget: budget, reserved: 0, observer: nil)
                // Held as a driver holds it (the call holds its exchange weakly).
                recorder.call = call
                call.start(body: body, bodyLength: body.count)
            }
        }
        #expect(budget.reserved == 0)
        return exchange.withLock { $0! }
    }

    @Test("an immediate unary method: 200, the codec's content type, the message in JSON")
    func immediateJSON() async throws {
        let method = GRPCMethod.immediateUnary("C") { request, _, responder in responder.respond(request + [0x21]) }
        let out = try await Self.run(method, body: Array("{hi}".utf8), headers: [("content-type", "application/json")])
        #expect(out.whole?.status == 200)
        #expect(out.whole?.header("content-type") == "application/json")
        #expect(out.whole.map { String(decoding: $0.body, as: UTF8.self) } == "{hi!}")
    }

    @Test("a task-based unary method in binary; a thrown status is Connect's JSON error with its HTTP status")
    func taskUnary() async throws {
        let echo = GRPCMethod.unary("C") { bytes, _ in bytes }
        let out = try await Self.run(echo, body: [1, 2], headers: [("content-type", "application/proto")])
        #expect(out.whole?.status == 200 && out.whole?.body == [1, 2])
        #expect(out.whole?.header("content-type") == "application/proto")
        let failing = GRPCMethod.unary("C") { _, _ in throw GRPCStatus(.notFound, "no such thing") }
        let failed = try await Self.run(failing, body: [1], headers: [("content-type", "application/proto")])
        #expect(failed.whole?.status == 404)
        #expect(failed.whole?.header("content-type") == "application/json")
        #expect(
            failed.whole.map { String(decoding: $0.body, as: UTF8.self) }
                == #"{"code":"not_found","message":"no such thing"}"#)
    }

    @Test("a request that does not decode never reaches the handler: invalid_argument naming the field")
    func badRequest() async throws {
        let method = GRPCMethod.immediateUnary("C") { _, _, _ in Issue.record("the handler ran") }
        let out = try await Self.run(method, body: Array("nope".utf8), headers: [("content-type", "application/json")])
        #expect(out.whole?.status == 400)
        #expect(
            out.whole.map { String(decoding: $0.body, as: UTF8.self) }
                == #"{"code":"invalid_argument","message":"x: not JSON"}"#)
    }

    @Test("Connect-Timeout-Ms ends an unanswered call with deadline_exceeded (504) and runs its cancel action")
    func deadline() async throws {
        let cancelled = Locked(false)
        let method = GRPCMethod.immediateUnary("C") { _, _, responder in
            responder.onCancel { cancelled.withLock { $0 = true } }
        }
        let out = try await Self.run(
            method, body: [], headers: [("content-type", "application/proto")], timeoutMilliseconds: 20)
        #expect(out.whole?.status == 504)
        #expect(cancelled.withLock { $0 })
    }

    @Test("server streaming: 200, enveloped messages, then the end-of-stream message with the status")
    func streaming() async throws {
        let method = GRPCMethod.serverStreaming("C") { request, writer, _ in
            await writer.send(request)
            await writer.send(request)
            throw GRPCStatus(.unavailable, "gone")
        }
        let out = try await Self.run(
            method, body: ConnectProtocol.envelope([7]), headers: [("content-type", "application/connect+proto")])
        #expect(out.whole == nil && out.ended)
        #expect(out.streamHeaders?.first?.value == "application/connect+proto")
        let end = ConnectProtocol.endStream(GRPCStatus(.unavailable, "gone"))
        #expect(out.streamed == ConnectProtocol.envelope([7]) + ConnectProtocol.envelope([7]) + end)
    }
}
