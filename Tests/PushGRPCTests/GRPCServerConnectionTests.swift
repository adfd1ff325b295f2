import Dispatch
import Glibc
import PushCore
import PushGzip
import PushHTTP2
import PushMockTesting
import PushPosix
import Testing

@testable import PushGRPC

/// A gRPC server on loopback driven by a plain HTTP/2 client (nghttp2 on both ends): what a call
/// and its connection answer, at the byte level a stock gRPC client sees.
@Suite("gRPC server connection")
struct GRPCServerConnectionTests {
    static let headers = [("content-type", "application/grpc"), ("te", "trailers")]

    /// A server with `test.T/Echo` (task), `test.T/Now` (immediate unary) and `test.T/Slow`.
    final class Harness: @unchecked Sendable {
        let group: EventLoopGroup
        let server: GRPCServer
        let client: H2Client

        init(_ adjust: (inout GRPCServerConfiguration) -> Void = { _ in }) throws {
            group = try EventLoopGroup(loopCount: 1, namePrefix: "grpc-server-test")
            let methods: [GRPCMethod] = [
                .unary("Echo") { bytes, _ in bytes },
                // Answers the metadata it was given, as "name=value;…".
                .unary("Metadata") { _, context in
                    Array(context.metadata.map { "\($0.name)=\($0.value);" }.joined().utf8)
                },
                .immediateUnary("Now") { bytes, _, responder in responder.respond(bytes.reversed()) },
                .unary("Slow") { bytes, _ in
                    try await Task.sleep(for: .seconds(5))
                    return bytes
                },
                // Each message answered from another thread after its first byte in ms; 255 fails.
                // (Dispatch, not a Task: the tests block cooperative threads while they wait.)
                .orderedStream("Ordered", window: 2) { bytes, _, responder in
                    guard bytes.first != 255 else { return responder.fail(GRPCStatus(.invalidArgument, "255")) }
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(bytes.first ?? 0))) {
                        responder.respond(bytes + [1])
                    }
                },
            ]
            var configuration = GRPCServerConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            adjust(&configuration)
            server = try GRPCServer(
                configuration: configuration, services: [GRPCService(name: "test.T", methods: methods)], group: group)
            client = try H2Client.connect(port: server.localPort, caPEM: nil, loop: group.next())
        }

        func call(_ path: String, _ body: [UInt8], headers: [(String, String)] = GRPCServerConnectionTests.headers)
            throws -> H2Response
        {
            try client.send(H2Request(path: path, headers: headers, body: body))
        }

        deinit {
            client.close()
            server.close()
            group.shutdown()
        }
    }

    static func framed(_ message: [UInt8], compressed: Bool = false) -> [UInt8] {
        let count = UInt32(message.count)
        return [
            compressed ? 1 : 0, UInt8(count >> 24), UInt8((count >> 16) & 0xff), UInt8((count >> 8) & 0xff),
            UInt8(count & 0xff),
        ] + message
    }

    @Test("a unary call in a task and an immediate one: one message each, then grpc-status 0")
    func unaryCalls() throws {
        let harness = try Harness()
        let echo = try harness.call("/test.T/Echo", Self.framed([1, 2, 3]))
        #expect(echo.status == 200)
        #expect(echo.header("content-type") == "application/grpc")
        #expect(echo.body == Self.framed([1, 2, 3]))
        #expect(echo.header("grpc-status") == "0")
        let now = try harness.call("/test.T/Now", Self.framed([1, 2, 3]))
        #expect(now.body == Self.framed([3, 2, 1]))
        #expect(now.header("grpc-status") == "0")
    }

    @Test("an ordered stream answers every message in request order, however late each is answered")
    func orderedStream() throws {
        let harness = try Harness()
        let delays: [UInt8] = [40, 0, 20, 0, 5]
        let response = try harness.call("/test.T/Ordered", delays.flatMap { Self.framed([$0]) })
        #expect(response.header("grpc-status") == "0")
        #expect(response.body == delays.flatMap { Self.framed([$0, 1]) })
    }

    @Test("an ordered stream's failed message ends the call after the answers before it")
    func orderedStreamFailure() throws {
        let harness = try Harness()
        let response = try harness.call("/test.T/Ordered", [30, 255, 0].flatMap { Self.framed([$0]) })
        #expect(response.header("grpc-status") == "3")
        #expect(response.body == Self.framed([30, 1]))
    }

    @Test("calls on one connection see their own metadata, repeated (HPACK-indexed), changed or back again")
    func metadataFromCallToCall() throws {
        let harness = try Harness()
        // The client's HPACK encoder indexes each new field: a repeat arrives as an index (the
        // same nghttp2 buffer at the server), a change as a new literal, an old value as an
        // older index; `x-two` comes and goes, which moves the fields after it to other places.
        let sequence: [[(String, String)]] = [
            [("x-one", "a")], [("x-one", "a")], [("x-one", "b")], [("x-one", "a")],
            [("x-one", "a"), ("x-two", "c")], [("x-one", "a"), ("x-two", "c")], [("x-one", "b")], [("x-one", "b")],
            [("x-two", "c"), ("x-one", "a")], [("x-one", "a")],
        ]
        for metadata in sequence {
            let answer = try harness.call("/test.T/Metadata", Self.framed([]), headers: Self.headers + metadata)
            #expect(answer.header("grpc-status") == "0")
            let expected = (Self.headers + metadata).map { "\($0.0)=\($0.1);" }.joined()
            #expect(String(decoding: answer.body.dropFirst(5), as: UTF8.self) == expected)
        }
    }

    @Test("unknown services and methods are UNIMPLEMENTED, naming what is unknown (Trailers-Only)")
    func unknownMethods() throws {
        let harness = try Harness()
        let service = try harness.call("/nope.N/Echo", Self.framed([]))
        #expect(service.status == 200)
        #expect(service.header("grpc-status") == "12")
        #expect(service.header("grpc-message") == "unknown service nope.N")
        #expect(service.body.isEmpty)
        let method = try harness.call("/test.T/Nope", Self.framed([]))
        #expect(method.header("grpc-status") == "12")
        #expect(method.header("grpc-message") == "unknown method Nope of service test.T")
    }

    @Test("bad requests get the status that names the problem")
    func badRequests() throws {
        let harness = try Harness()
        // The compressed flag without grpc-encoding (compression.md, test case 6).
        let compressed = try harness.call("/test.T/Echo", Self.framed([1], compressed: true))
        #expect(compressed.header("grpc-status") == "13")
        #expect(compressed.header("grpc-message")?.contains("compressed flag") == true)
        // A body that ends inside a message.
        let truncated = try harness.call("/test.T/Echo", Array(Self.framed([1, 2, 3]).dropLast()))
        #expect(truncated.header("grpc-status") == "3")
        // An immediate unary method given two messages.
        let two = try harness.call("/test.T/Now", Self.framed([1]) + Self.framed([2]))
        #expect(two.header("grpc-status") == "3")
        #expect(two.header("grpc-message") == "the method takes one request message; the client sent more")
        // No request message at all.
        let none = try harness.call("/test.T/Now", [])
        #expect(none.header("grpc-status") == "3")
    }

    @Test("gzip both ways: a compressed request is inflated, a large answer to a gzip client compressed")
    func gzip() throws {
        let harness = try Harness()
        let large = Array(String(repeating: "compress me ", count: 200).utf8)
        let gzipped = try #require(Gzip.compress(large))
        for path in ["/test.T/Echo", "/test.T/Now"] {
            let response = try harness.call(
                path, Self.framed(gzipped, compressed: true), headers: Self.headers + [("grpc-encoding", "gzip")])
            #expect(response.header("grpc-status") == "0", "\(path)")
            #expect(response.header("grpc-accept-encoding") == "gzip")
            #expect(response.header("grpc-encoding") == nil, "the client did not say it accepts gzip")
            #expect(response.body.first == 0 && response.body.count == large.count + 5)
        }
        let accepting = Self.headers + [("grpc-encoding", "gzip"), ("grpc-accept-encoding", "identity,deflate,gzip")]
        let echo = try harness.call("/test.T/Echo", Self.framed(gzipped, compressed: true), headers: accepting)
        #expect(echo.header("grpc-status") == "0")
        #expect(echo.header("grpc-encoding") == "gzip")
        #expect(echo.body.first == 1)
        #expect(try Gzip.decompress(Array(echo.body.dropFirst(5)), maxSize: 1 << 20) == large)
        // Small answers go uncompressed (flag 0) even so.
        let small = try harness.call("/test.T/Echo", Self.framed([1, 2]), headers: accepting)
        #expect(small.body == Self.framed([1, 2]))
    }

    @Test("an unknown grpc-encoding is UNIMPLEMENTED with grpc-accept-encoding; a bomb is RESOURCE_EXHAUSTED")
    func badCompression() throws {
        let harness = try Harness { $0.maxMessageSize = 1 << 20 }
        let snappy = try harness.call(
            "/test.T/Echo", Self.framed([1], compressed: true), headers: Self.headers + [("grpc-encoding", "snappy")])
        #expect(snappy.header("grpc-status") == "12")
        #expect(snappy.header("grpc-accept-encoding") == "gzip")
        #expect(snappy.header("grpc-message")?.contains("snappy") == true)
        let bomb = try #require(Gzip.compress([UInt8](repeating: 0, count: 5_000_000), level: 9))
        for path in ["/test.T/Echo", "/test.T/Now"] {
            let response = try harness.call(
                path, Self.framed(bomb, compressed: true), headers: Self.headers + [("grpc-encoding", "gzip")])
            #expect(response.header("grpc-status") == "8", "\(path)")
            #expect(response.header("grpc-message")?.contains("1048576") == true)
        }
        #expect(eventually { harness.server.activeCalls == 0 })
        // Nothing stays reserved: a whole-limit message still fits afterwards.
        let fits = try #require(Gzip.compress([UInt8](repeating: 0, count: 1 << 20)))
        let response = try harness.call(
            "/test.T/Now", Self.framed(fits, compressed: true), headers: Self.headers + [("grpc-encoding", "gzip")])
        #expect(response.header("grpc-status") == "0")
    }

    @Test("grpc-timeout ends a call that runs past it with DEADLINE_EXCEEDED")
    func deadline() throws {
        let harness = try Harness()
        let started = monotonic()
        let response = try harness.call(
            "/test.T/Slow", Self.framed([9]), headers: Self.headers + [("grpc-timeout", "100m")])
        #expect(response.header("grpc-status") == "4")
        #expect(monotonic() - started < 4, "answered at the deadline, not when the handler finished")
    }

    @Test("graceful shutdown sends GOAWAY and lets a running call finish")
    func gracefulShutdown() throws {
        let harness = try Harness()
        #expect(try harness.call("/test.T/Echo", Self.framed([1])).header("grpc-status") == "0")
        harness.server.beginShutdown()
        #expect(eventually { harness.client.goAwayLastStreamID != nil })
        #expect(eventually { harness.server.activeCalls == 0 })
    }
}
