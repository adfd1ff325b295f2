import Dispatch
import Glibc
import Testing

@testable import PushPosix

@Suite("Host resolver: DNS off the event loop, shared, cached, time-limited; addresses checked")
struct HostResolverTests {
    /// A resolver whose lookups of names ending `.slow.test` take `delay` (on the lookup thread),
    /// answering 127.0.0.1; it counts the lookups per name.
    final class SlowDNS: Sendable {
        let lookups = Shared<[String: Int]>([:])
        /// The name of the thread each lookup ran on.
        let threads = Shared<Set<String>>([])
        let resolver: HostResolver

        init(delay: Duration, configuration: HostResolver.Configuration = .init(), now: (@Sendable () -> UInt64)? = nil)
        {
            let (lookups, threads) = (self.lookups, self.threads)
            let lookup: HostResolver.Lookup = { name in
                lookups.update { $0[name, default: 0] += 1 }
                threads.update { $0.insert(currentThreadName()) }
                if name.hasSuffix(".slow.test") {
                    let (seconds, attoseconds) = delay.components
                    usleep(UInt32(seconds) * 1_000_000 + UInt32(attoseconds / 1_000_000_000_000))
                }
                return .success([SocketAddress.literal("127.0.0.1", port: 0)!])
            }
            resolver =
                if let now {
                    HostResolver(configuration: configuration, now: now, lookup: lookup)
                } else {
                    HostResolver(configuration: configuration, lookup: lookup)
                }
        }
    }

    /// A connect whose outcome and duration the test thread waits for.
    final class Outcome: Sendable {
        let done = DispatchSemaphore(value: 0)
        let result = Shared<(Result<Connection, any Error>, seconds: Double)?>(nil)

        init(
            _ host: String, port: Int, loop: EventLoop, resolver: HostResolver, admission: AddressAdmission = .any,
            timeout: Duration = .seconds(10)
        ) {
            let start = EventLoop.monotonicNow
            Connection.connect(
                host: host, port: port, on: loop, handler: Collector(expected: 0), timeout: timeout,
                admission: admission, resolver: resolver
            ) { [result, done] outcome in
                result.update { $0 = (outcome, Double(EventLoop.monotonicNow - start) / 1e9) }
                done.signal()
            }
        }

        /// Polls, not a semaphore: a test blocking a thread of Swift's cooperative pool for seconds
        /// (there are as many as cores) starves every async test running beside it.
        func wait(seconds: Double = 10) async -> (Result<Connection, any Error>, seconds: Double)? {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while result.value == nil, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return result.value
        }
    }

    private func listen(_ group: EventLoopGroup, accepted: Shared<Int>) throws -> TCPServer {
        try TCPServer.listen(host: "127.0.0.1", port: 0, group: group) { _ in
            accepted.update { $0 += 1 }
            return EchoHandler()
        }
    }

    @Test("a lookup that answers after 3 s delays no other connection, timer or task on the loop")
    func slowLookupBlocksNothingElse() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "slowdns")
        defer { group.shutdown() }
        let loop = group.loops[0]
        let accepted = Shared(0)
        let server = try listen(group, accepted: accepted)
        defer { server.close() }
        let dns = SlowDNS(delay: .seconds(3))

        let slow = Outcome("push.slow.test", port: server.localPort, loop: loop, resolver: dns.resolver)
        let slowAgain = Outcome("PUSH.slow.test", port: server.localPort, loop: loop, resolver: dns.resolver)
        // Meanwhile, on the same loop: a connect to another name, a timer, a task.
        let fast = Outcome("localhost", port: server.localPort, loop: loop, resolver: dns.resolver)
        let timerLateness = Shared<Double?>(nil)
        let timerFired = DispatchSemaphore(value: 0)
        loop.execute {
            let due = EventLoop.monotonicNow + 100_000_000
            loop.schedule(at: due) {
                timerLateness.update { $0 = Double(EventLoop.monotonicNow - due) / 1e9 }
                timerFired.signal()
            }
        }
        let (fastResult, fastSeconds) = try #require(await fast.wait())
        #expect(throws: Never.self) { try fastResult.get() }
        #expect(fastSeconds < 1, "a connect to another name waited \(fastSeconds) s")
        #expect(timerFired.wait(timeout: .now() + 2) == .success)  // fired already, in all but a failure
        #expect(try #require(timerLateness.value) < 0.5)
        let taskStart = EventLoop.monotonicNow
        #expect(onLoop(loop) { 1 } == 1)
        #expect(Double(EventLoop.monotonicNow - taskStart) / 1e9 < 0.5)

        let (slowResult, slowSeconds) = try #require(await slow.wait())
        let (againResult, againSeconds) = try #require(await slowAgain.wait())
        #expect(throws: Never.self) { try slowResult.get() }
        #expect(throws: Never.self) { try againResult.get() }
        #expect(slowSeconds >= 2.9 && slowSeconds < 5, "\(slowSeconds)")
        #expect(againSeconds >= 2.9 && againSeconds < 5, "\(againSeconds)")
        // Both connects waited for one query (names compare without case).
        #expect(dns.lookups.value["push.slow.test"] == 1)
        #expect(accepted.value == 3)
        #expect(dns.threads.value == ["dns-lookup"], "lookups run on threads of their own, not the loop's")
    }

    @Test("lookups of different slow names run at once: three take 3 s, not 9")
    func slowLookupsRunConcurrently() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "slowdns3")
        defer { group.shutdown() }
        let server = try listen(group, accepted: Shared(0))
        defer { server.close() }
        let dns = SlowDNS(delay: .seconds(3))
        let outcomes = ["a", "b", "c"].map {
            Outcome("\($0).slow.test", port: server.localPort, loop: group.loops[0], resolver: dns.resolver)
        }
        for outcome in outcomes {
            let (result, seconds) = try #require(await outcome.wait())
            #expect(throws: Never.self) { try result.get() }
            #expect(seconds < 5, "\(seconds)")
        }
    }

    @Test("past the time limit the connect fails; the late answer is kept for the next connect")
    func timeLimit() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "dnslimit")
        defer { group.shutdown() }
        let server = try listen(group, accepted: Shared(0))
        defer { server.close() }
        var configuration = HostResolver.Configuration()
        configuration.timeLimit = .milliseconds(300)
        let dns = SlowDNS(delay: .seconds(1), configuration: configuration)
        let (result, seconds) = try #require(
            await Outcome("late.slow.test", port: server.localPort, loop: group.loops[0], resolver: dns.resolver)
                .wait())
        guard case .failure(let error) = result else {
            Issue.record("connected past the time limit")
            return
        }
        #expect((error as? IOError)?.errno == ETIMEDOUT)
        #expect(seconds >= 0.29 && seconds < 0.9, "\(seconds)")
        try await Task.sleep(for: .seconds(1))
        #expect(dns.resolver.counts.cached == 1)
        let (again, againSeconds) = try #require(
            await Outcome("late.slow.test", port: server.localPort, loop: group.loops[0], resolver: dns.resolver)
                .wait())
        #expect(throws: Never.self) { try again.get() }
        #expect(againSeconds < 0.2)
        #expect(dns.lookups.value["late.slow.test"] == 1)
    }

    @Test("answers are kept for cacheTime, then looked up again")
    func cacheTime() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "dnscache")
        defer { group.shutdown() }
        let server = try listen(group, accepted: Shared(0))
        defer { server.close() }
        let clock = Shared<UInt64>(1_000)
        var configuration = HostResolver.Configuration()
        configuration.cacheTime = .seconds(60)
        let dns = SlowDNS(delay: .zero, configuration: configuration, now: { clock.value })
        for advance: UInt64 in [0, 59_000_000_000, 2_000_000_000] {
            clock.update { $0 += advance }
            let (result, _) = try #require(
                await Outcome("cached.example", port: server.localPort, loop: group.loops[0], resolver: dns.resolver)
                    .wait())
            #expect(throws: Never.self) { try result.get() }
        }
        #expect(dns.lookups.value["cached.example"] == 2)
    }

    @Test("globalOnly: a name resolving to 127.0.0.1, or the literal, is refused and never connected to")
    func refusedAddresses() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "dnsrefuse")
        defer { group.shutdown() }
        let accepted = Shared(0)
        let server = try listen(group, accepted: accepted)
        defer { server.close() }
        let dns = SlowDNS(delay: .zero)
        for host in ["inside.example", "127.0.0.1", "[::ffff:127.0.0.1]"] {
            let outcome = Outcome(
                host, port: server.localPort, loop: group.loops[0], resolver: dns.resolver, admission: .globalOnly)
            let (result, _) = try #require(await outcome.wait())
            guard case .failure(let error) = result, let refusal = error as? AddressRefusal else {
                Issue.record("\(host): \(result)")
                continue
            }
            #expect(refusal.scope == .loopback)
            #expect(refusal.address == "127.0.0.1" || refusal.address == "::ffff:127.0.0.1")
        }
        let (allowed, _) = try #require(
            await Outcome("inside.example", port: server.localPort, loop: group.loops[0], resolver: dns.resolver)
                .wait())
        #expect(throws: Never.self) { try allowed.get() }
        _ = onLoop(group.loops[0]) { 0 }
        #expect(accepted.value == 1)
    }

    @Test("a loop shut down while a name is being resolved cancels the connect")
    func shutdownWhileResolving() async throws {
        let loop = try EventLoop.spawn(name: "dnsshutdown")
        let dns = SlowDNS(delay: .seconds(2))
        let outcome = Outcome("gone.slow.test", port: 443, loop: loop, resolver: dns.resolver)
        _ = onLoop(loop) { 0 }
        loop.shutdown()
        let (result, seconds) = try #require(await outcome.wait(seconds: 5))
        guard case .failure(let error) = result else {
            Issue.record("connected")
            return
        }
        #expect((error as? IOError)?.errno == ECANCELED)
        #expect(seconds < 1.5)
    }
}

/// This thread's name (/proc/thread-self/comm).
private func currentThreadName() -> String {
    guard let file = fopen("/proc/thread-self/comm", "r") else { return "" }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 32)
    guard fgets(&buffer, 32, file) != nil else { return "" }
    let bytes = buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
