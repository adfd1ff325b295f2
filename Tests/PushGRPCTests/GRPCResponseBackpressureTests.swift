import Glibc
import PushHTTP2
import PushMockTesting
import PushPosix
import PushSync
import Testing

@testable import PushGRPC

/// A server-streaming handler writing to a client that does not read: ``GRPCResponseWriter/send(_:)``
/// must stop it near ``GRPCResponseWriter/maxQueuedBytes`` (memory a client cannot inflate), and the
/// connection's flushes must wake it once the client reads again (no message lost, the call ends OK).
@Suite("gRPC response backpressure")
struct GRPCResponseBackpressureTests {
    static let messages = 64
    static let messageBytes = 64 << 10

    @Test("a handler writing to a client that does not read waits, and goes on once it reads")
    func waitsForTheClient() throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "backpressure")
        defer { group.shutdown() }
        let sent = Locked(0)
        let stream = GRPCMethod(name: "Stream", kind: .serverStreaming) { _, writer, _ in
            for index in 0..<Self.messages {
                await writer.send([UInt8](repeating: UInt8(index), count: Self.messageBytes))
                sent.withLock { $0 += 1 }
            }
        }
        var configuration = GRPCServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        let server = try GRPCServer(
            configuration: configuration, services: [GRPCService(name: "test.T", methods: [stream])], group: group)
        defer { server.close() }
        let client = try H2Client.connect(port: server.localPort, caPEM: nil, loop: group.next())
        defer { client.close() }

        client.setReading(false)
        let ids = try client.submit([
            H2Request(
                path: "/test.T/Stream", headers: [("content-type", "application/grpc"), ("te", "trailers")],
                body: [0, 0, 0, 0, 0])
        ])
        // The stream's window (H2Client's 1 MiB) goes out, then the call queues up to
        // maxQueuedBytes and its handler waits.
        let window = Int(HTTP2Settings.clientDefaults.initialWindowSize)
        let bound = (GRPCResponseWriter.maxQueuedBytes + window) / Self.messageBytes + 2
        #expect(eventually { sent.withLock { $0 } >= bound - 3 })
        usleep(300_000)
        let whileUnread = sent.withLock { $0 }
        #expect(whileUnread <= bound, "the handler went on while the client read nothing: \(whileUnread) sent")
        #expect(whileUnread < Self.messages)

        client.setReading(true)
        let response = try client.wait(for: ids, seconds: 20)[0]
        #expect(sent.withLock { $0 } == Self.messages)
        #expect(response.header("grpc-status") == "0")
        // Every message arrived whole and in order: 5-byte prefix, then the bytes of its index.
        let framed = 5 + Self.messageBytes
        #expect(response.body.count == Self.messages * framed)
        for index in 0..<Self.messages where response.body.count == Self.messages * framed {
            #expect(response.body[index * framed + 5] == UInt8(index))
        }
    }
}
