import Dispatch
import Glibc
import PushPosix
import Testing

@Suite("Group lifecycle and signals")
struct ShutdownTests {
    @Test("group shutdown closes connections and joins every loop thread")
    func groupShutdownJoinsThreads() throws {
        // Thread names are unique to this test so parallel tests cannot interfere.
        let prefix = "gj\(getpid() % 1000)x"
        let group = try EventLoopGroup(loopCount: 3, namePrefix: prefix)
        #expect(group.loops.count == 3)
        // Round robin visits every loop.
        let visited = Set((0..<6).map { _ in ObjectIdentifier(group.next()) })
        #expect(visited.count == 3)
        for loop in group.loops { _ = onLoop(loop) { 0 } }  // every thread has named itself
        #expect(threadNames().filter { $0.hasPrefix(prefix) }.count == 3)

        let serverSide = Collector(expected: 1)
        let server = try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in serverSide }
        let client = Collector(expected: 1)
        let connection = try #require(
            try connectAndWait(port: server.localPort, loop: group.loops[1], handler: client)?.get())
        _ = onLoop(connection.loop) { connection.write([9]) }
        #expect(waitFor(serverSide.done))

        group.shutdown()
        #expect(serverSide.closeCount == 1)
        #expect(client.closeCount == 1)
        #expect(client.closeError == nil)
        // Joined; the kernel may list an exited thread under /proc/self/task for a moment after its
        // join returns (the join's futex is cleared before the task is reaped), so allow a second.
        var left = threadNames().filter { $0.hasPrefix(prefix) }
        for _ in 0..<100 where !left.isEmpty {
            usleep(10_000)
            left = threadNames().filter { $0.hasPrefix(prefix) }
        }
        #expect(left.isEmpty)
        #expect(group.loops.allSatisfy { !$0.tryExecute {} })
        server.close()  // after shutdown: harmless
        group.shutdown()  // idempotent
    }

    @Test("onSignal runs the closure on the loop when the signal arrives")
    func signalOnLoop() throws {
        let loop = try EventLoop.spawn(name: "signals")
        defer { loop.shutdown() }
        let received = DispatchSemaphore(value: 0)
        let ranOnLoop = Shared(false)
        let registered = onLoop(loop) { () -> Bool in
            do {
                try loop.onSignal(SIGUSR2) {
                    ranOnLoop.update { $0 = loop.inEventLoop }
                    received.signal()
                }
            } catch {
                return false
            }
            // Thread-directed, and blocked on this thread by onSignal: it stays pending until
            // the signalfd reads it, whatever the other test threads' masks are.
            return pthread_kill(pthread_self(), SIGUSR2) == 0
        }
        #expect(registered == true)
        #expect(waitFor(received))
        #expect(ranOnLoop.value)
    }
}
