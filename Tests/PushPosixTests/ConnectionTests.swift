import Dispatch
import Glibc
import PushPosix
import Testing

@Suite("TCP connections")
struct ConnectionTests {
    @Test("echo round trip of 4 MiB through TCPServer and Connection.connect")
    func echoRoundTrip() throws {
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "echo")
        defer { group.shutdown() }
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in EchoHandler() }
        #expect(server.localPort > 0)

        // Bigger than the loopback socket buffers, so writes are partial and EPOLLOUT is used.
        let size = 4 * 1024 * 1024
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
        let client = Collector(expected: size)
        let connection = try #require(
            try connectAndWait(port: server.localPort, loop: group.loops[1], handler: client)?.get())
        #expect(connection.isLoopbackPeer)
        #expect(connection.remoteAddress == "127.0.0.1:\(server.localPort)")
        let pending = onLoop(connection.loop) { () -> Int in
            connection.write(payload)
            return connection.pendingWriteBytes
        }
        #expect(pending == size)
        #expect(waitFor(client.done))
        #expect(client.received == payload)
        #expect(waitFor(client.drained))
        #expect(onLoop(connection.loop) { connection.pendingWriteBytes } == 0)
        server.close()
    }

    @Test("many writes in one turn are batched and all reach the peer")
    func batchedWrites() throws {
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "batch")
        defer { group.shutdown() }
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in EchoHandler() }
        let messages = 1000
        let client = Collector(expected: messages * 8)
        let connection = try #require(
            try connectAndWait(port: server.localPort, loop: group.loops[0], handler: client)?.get())
        let pending = onLoop(connection.loop) { () -> [Int] in
            var observed: [Int] = []
            for i in 0..<messages {
                withUnsafeBytes(of: UInt64(i).bigEndian) { connection.write($0) }
                observed.append(connection.pendingWriteBytes)
            }
            return observed
        }
        // Nothing is written until the end of the turn: the buffer only grows.
        #expect(pending == (1...messages).map { $0 * 8 })
        #expect(waitFor(client.done))
        let expected = (0..<messages).flatMap { i in withUnsafeBytes(of: UInt64(i).bigEndian) { Array($0) } }
        #expect(client.received == expected)
        #expect(waitFor(client.drained))
        #expect(client.drainCount == 1)  // one flush emptied everything
    }

    @Test("peer close is reported once with a nil error")
    func peerClose() throws {
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "peerclose")
        defer { group.shutdown() }
        let serverSide = Collector(expected: 1)
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in serverSide }
        let client = Collector(expected: 1)
        let connection = try #require(
            try connectAndWait(port: server.localPort, loop: group.loops[0], handler: client)?.get())
        _ = onLoop(connection.loop) { connection.write([42]) }
        #expect(waitFor(serverSide.done))
        _ = onLoop(connection.loop) { connection.close() }
        #expect(waitFor(serverSide.closed))
        #expect(waitFor(client.closed))
        // Let every loop finish another turn, then check nothing was reported twice.
        for loop in group.loops { _ = onLoop(loop) { 0 } }
        #expect(serverSide.closeCount == 1)
        #expect(serverSide.closeError == nil)
        #expect(client.closeCount == 1)
        #expect(onLoop(connection.loop) { connection.isClosed } == true)
        // Writes after close are ignored.
        #expect(
            onLoop(connection.loop) {
                connection.write([1])
                return connection.pendingWriteBytes
            } == 0)
    }

    @Test("a connection may write and close itself inside didReceive")
    func closeInsideDidReceive() throws {
        final class ReplyAndClose: ConnectionHandler, @unchecked Sendable {
            // Loop-thread state, read by the test after `closed` is signalled.
            let closed = DispatchSemaphore(value: 0)
            let closes = Shared(0)
            let callsAfterClose = Shared(0)
            func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
                if connection.isClosed { callsAfterClose.update { $0 += 1 } }
                connection.write(Array("bye".utf8))
                connection.close()
                connection.close()  // idempotent
                connection.write([0])  // ignored
            }
            func connectionDidClose(_ connection: Connection, error: IOError?) {
                closes.update { $0 += 1 }
                closed.signal()
            }
        }
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "selfclose")
        defer { group.shutdown() }
        let serverSide = ReplyAndClose()
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in serverSide }
        let client = Collector(expected: 3)
        let connection = try #require(
            try connectAndWait(port: server.localPort, loop: group.loops[0], handler: client)?.get())
        _ = onLoop(connection.loop) { connection.write(Array(repeating: 7, count: 300_000)) }
        #expect(waitFor(serverSide.closed))
        #expect(waitFor(client.closed))
        #expect(Array(client.received.prefix(3)) == Array("bye".utf8))
        _ = onLoop(group.loops[0]) { 0 }
        #expect(serverSide.closes.value == 1)
        #expect(serverSide.callsAfterClose.value == 0)
    }

    @Test("a handler that keeps a half-closed connection answers after the peer's EOF, then closes it")
    func halfClose() throws {
        final class AnswerAfterEnd: ConnectionHandler, @unchecked Sendable {
            let ends = Shared(0)
            let closed = DispatchSemaphore(value: 0)
            func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {}
            func connectionDidReceiveEnd(_ connection: Connection) -> Bool {
                ends.update { $0 += 1 }
                // The answer comes later, as a request's would; reading never resumes.
                connection.resumeReading()
                connection.loop.schedule(after: .milliseconds(50)) {
                    connection.write(Array("answer".utf8))
                    connection.close()
                }
                return true
            }
            func connectionDidClose(_ connection: Connection, error: IOError?) { closed.signal() }
        }
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "halfclose")
        defer { group.shutdown() }
        let handler = AnswerAfterEnd()
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in handler }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.localPort).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        _ = Array("request".utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
        #expect(Glibc.shutdown(fd, Int32(SHUT_WR)) == 0)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received += buffer[0..<n]
        }
        #expect(String(decoding: received, as: UTF8.self) == "answer")
        #expect(waitFor(handler.closed))
        #expect(handler.ends.value == 1)
    }

    @Test("connecting to a closed port fails with ECONNREFUSED")
    func connectRefused() throws {
        let loop = try EventLoop.spawn(name: "refused")
        defer { loop.shutdown() }
        let result = try #require(connectAndWait(port: unusedPort(), loop: loop, handler: Collector(expected: 0)))
        switch result {
        case .success:
            Issue.record("connect to an unused port succeeded")
        case .failure(let error):
            #expect((error as? IOError)?.errno == ECONNREFUSED)
        }
    }

    @Test("connect by name tries each resolved address (localhost)")
    func connectLocalhost() throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "localhost")
        defer { group.shutdown() }
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in EchoHandler() }
        let client = Collector(expected: 4)
        let connection = try #require(
            try connectAndWait(host: "localhost", port: server.localPort, loop: group.loops[0], handler: client)?.get())
        #expect(connection.remoteAddress == "127.0.0.1:\(server.localPort)")
        _ = onLoop(connection.loop) { connection.write([1, 2, 3, 4]) }
        #expect(waitFor(client.done))
    }

    @Test("pauseReading holds data back until resumeReading")
    func pauseAndResume() throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "pause")
        defer { group.shutdown() }
        let accepted = Shared<Connection?>(nil)
        let serverSide = Collector(expected: 6)
        let gotConnection = DispatchSemaphore(value: 0)
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { connection in
            connection.pauseReading()
            accepted.update { $0 = connection }
            gotConnection.signal()
            return serverSide
        }
        let client = Collector(expected: 0)
        let connection = try #require(
            try connectAndWait(port: server.localPort, loop: group.loops[0], handler: client)?.get())
        #expect(waitFor(gotConnection))
        _ = onLoop(connection.loop) { connection.write([1, 2, 3]) }
        // A few turns go by with the data in the kernel and nothing delivered.
        for _ in 0..<5 { _ = onLoop(group.loops[0]) { 0 } }
        #expect(serverSide.received.isEmpty)
        let peer = try #require(accepted.value)
        _ = onLoop(peer.loop) { peer.resumeReading() }
        _ = onLoop(connection.loop) { connection.write([4, 5, 6]) }
        #expect(waitFor(serverSide.done))
        #expect(serverSide.received == [1, 2, 3, 4, 5, 6])
    }

    @Test("what a peer answered before resetting the connection is delivered before the write error")
    func answerBeforeReset() throws {
        let loop = try EventLoop.spawn(name: "reset")
        defer { loop.shutdown() }
        // A plain blocking server socket: accept, answer, then close with SO_LINGER 0 (an RST).
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(listener, $0, length)
                _ = getsockname(listener, $0, &length)
            }
        }
        #expect(listen(listener, 1) == 0)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let go = DispatchSemaphore(value: 0)
        let reset = DispatchSemaphore(value: 0)
        let serverThread = try startThread("reset-server") {
            let peer = accept(listener, nil, nil)
            guard peer >= 0, waitFor(go) else { return }
            _ = Array("answer".utf8).withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(peer, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(peer)
            reset.signal()
        }
        let client = Collector(expected: 6)
        let connection = try #require(try connectAndWait(port: port, loop: loop, handler: client)?.get())
        // In one loop turn: the reset has arrived (the answer still unread), then a write, flushed
        // at the end of the turn, fails.
        _ = onLoop(loop) {
            go.signal()
            _ = waitFor(reset)
            usleep(50_000)
            connection.write([1, 2, 3])
        }
        #expect(waitFor(client.closed))
        #expect(client.received == Array("answer".utf8))
        let code = client.closeError?.errno
        #expect(code == ECONNRESET || code == EPIPE)
        pthread_join(serverThread, nil)
    }

    @Test("a graceful close sends everything buffered, even past the socket buffers, and ends with EOF")
    func gracefulCloseSendsEverything() throws {
        final class WriteAndClose: ConnectionHandler, @unchecked Sendable {
            let payload: [UInt8]
            init(_ payload: [UInt8]) { self.payload = payload }
            func connection(_ connection: Connection, didReceive bytes: UnsafeRawBufferPointer) {
                // Reading stops, so the rest of the peer's input stays unread in the kernel.
                connection.pauseReading()
                connection.write(payload)
                connection.close(flushFirst: true)
            }
            func connectionDidClose(_ connection: Connection, error: IOError?) {}
        }
        let group = try EventLoopGroup(loopCount: 2, namePrefix: "linger")
        defer { group.shutdown() }
        let size = 8 * 1024 * 1024
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 10) }
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in WriteAndClose(payload) }
        let client = Collector(expected: size)
        let connection = try #require(
            try connectAndWait(port: server.localPort, loop: group.loops[1], handler: client)?.get())
        // More than one read's worth, so input is still unread when the server closes.
        _ = onLoop(connection.loop) { connection.write(Array(repeating: 1, count: 256 * 1024)) }
        #expect(waitFor(client.closed))
        #expect(client.received.count == size)
        #expect(client.received == payload)
        #expect(client.closeError == nil)
        server.close()
    }
}
