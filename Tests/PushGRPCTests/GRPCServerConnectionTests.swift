import Glibc
import PushHTTP2
import PushMockTesting
import PushPosix
import PushSync
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
                .immediateUnary("Now") { bytes, _, responder in responder.respond(bytes.reversed()) },
                .unary("Slow") { bytes, _ in
                    try await Task.sleep(for: .seconds(5))
                    return bytes
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
        // Pushgate advertises identity only; a compressed message is refused, not misread.
        let compressed = try harness.call("/test.T/Echo", Self.framed([1], compressed: true))
        #expect(compressed.header("grpc-status") == "12")
        #expect(compressed.header("grpc-message")?.hasPrefix("compressed messages are not supported") == true)
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
