import PushPosix
import PushTransport
import Testing

@Suite("HTTP listener")
struct HTTPListenerTests {
    @Test("a connection whose transport cannot be made is closed, and the listener goes on accepting")
    func serveFailure() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "listener")
        defer { group.shutdown() }
        let server = try TestServer(.http2, group: group, failingConnections: 1)
        defer { server.close() }
        do {
            let response = try await HTTPExchangeTests.post(to: server.port, loop: group.next())
            Issue.record("the refused connection answered \(response.status)")
        } catch {
            // The client sees its connection closed during the TLS handshake.
            #expect("\(error)" == "the connection closed before the answer was complete")
        }
        let response = try await HTTPExchangeTests.post(to: server.port, loop: group.next())
        #expect(response.status == 200)
        #expect(server.connections == 2)
        #expect(server.requests.count == 1)
    }
}
