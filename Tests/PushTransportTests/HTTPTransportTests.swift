import PushHTTP2
import PushPosix
import PushSync
import PushTestSupport
import PushTransport
import Testing

/// Real sockets and TLS on loopback: a client ``HTTPTransport`` against a ``TestServer`` made of
/// the module's server side.
@Suite("HTTP transport over loopback")
struct HTTPTransportTests {
    @Test(
        "a client offering h2 and http/1.1 speaks the version the server chose by ALPN",
        arguments: [HTTPVersion.http1, .http2])
    func autoFollowsTheServer(serverVersion: HTTPVersion) async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-alpn")
        defer { group.shutdown() }
        let server = try TestServer(serverVersion, group: group)
        defer { server.close() }
        let probe = try ClientProbe(loop: group.next(), policy: .auto)
        #expect(await onLoop(probe.loop) { probe.transport.version == nil } == true, "no version before the handshake")

        probe.connect(port: server.port)
        #expect(await eventually { probe.snapshot.readyCount == 1 || probe.snapshot.closeCount > 0 })
        let ready = probe.snapshot
        #expect(ready.connectResult == "ok")
        #expect(ready.closeError == nil)
        #expect(ready.versionWhenReady == serverVersion)
        let sessions = await onLoop(probe.loop) {
            (probe.transport.session != nil, probe.transport.http1Session != nil)
        }
        #expect(sessions?.0 == (serverVersion == .http2), "an HTTP/2 session only for h2")
        #expect(sessions?.1 == (serverVersion == .http1), "an HTTP/1.1 session only for http/1.1")

        probe.get("/which")
        #expect(await eventually { probe.snapshot.answers.count == 1 })
        let answer = try #require(probe.snapshot.answers.first)
        #expect(answer.status == 200)
        #expect(answer.servedBy == (serverVersion == .http2 ? "h2" : "http/1.1"))
        #expect(answer.body == Array("hello".utf8))
        #expect(server.requests.map(\.path) == ["/which"])
        #expect(server.requests.first?.version == serverVersion)
    }

    @Test("an HTTP/2-only client gives up on a server that offers only http/1.1, never ready")
    func http2OnlyAgainstHTTP1() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-h2only")
        defer { group.shutdown() }
        let server = try TestServer(.http1, group: group)
        defer { server.close() }
        let probe = try ClientProbe(loop: group.next(), policy: .http2)
        probe.connect(port: server.port)
        #expect(await eventually { probe.snapshot.closeCount == 1 })
        let closed = probe.snapshot
        #expect(closed.connectResult == "ok", "TCP connected; TLS is what fails")
        #expect(closed.readyCount == 0)
        #expect(closed.closeError == "the peer did not agree to HTTP/2 (ALPN h2) in the TLS handshake")
        #expect(server.requests.isEmpty)
    }

    @Test("a server speaking HTTP/2 drops a client that offered only http/1.1 (no ALPN agreed)")
    func http1OnlyAgainstHTTP2() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-h1only")
        defer { group.shutdown() }
        let server = try TestServer(.http2, group: group)
        defer { server.close() }
        let probe = try ClientProbe(loop: group.next(), policy: .http1)
        probe.connect(port: server.port)
        // The client takes "no ALPN" for HTTP/1.1 (RFC 7301 allows it); the server does not.
        #expect(await eventually { probe.snapshot.closeCount == 1 })
        #expect(probe.snapshot.versionWhenReady == .http1)
        #expect(await eventually { !server.closeErrors.isEmpty })
        #expect(server.closeErrors == ["the peer did not agree to HTTP/2 (ALPN h2) in the TLS handshake"])
    }

    @Test("a server transport for HTTP/1.1 refuses a client that got h2 from a misconfigured context")
    func http1ServerGivenH2() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-h1server")
        defer { group.shutdown() }
        let server = try TestServer(.http1, group: group, alpn: ["h2"])
        defer { server.close() }
        let probe = try ClientProbe(loop: group.next(), policy: .auto)
        probe.connect(port: server.port)
        #expect(await eventually { !server.closeErrors.isEmpty })
        #expect(server.closeErrors == ["the client chose h2 by ALPN, but this server speaks HTTP/1.1"])
        #expect(await eventually { probe.snapshot.closeCount == 1 })
        #expect(probe.snapshot.versionWhenReady == .http2, "the client believed the context")
    }

    @Test("cleartext HTTP/2 with prior knowledge: ready once connected, requests answered")
    func cleartextHTTP2() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-h2c")
        defer { group.shutdown() }
        let server = try TestServer(.http2, tls: false, group: group)
        defer { server.close() }
        let probe = try ClientProbe(cleartextHTTP2Loop: group.next())
        probe.connect(port: server.port)
        #expect(await eventually { probe.snapshot.readyCount == 1 })
        #expect(probe.snapshot.versionWhenReady == .http2)
        probe.get("/plain")
        #expect(await eventually { probe.snapshot.answers.count == 1 })
        #expect(probe.snapshot.answers.first?.servedBy == "h2")
        #expect(probe.snapshot.answers.first?.body == Array("hello".utf8))
        #expect(server.requests.first?.path == "/plain")
    }

    @Test("setNeedsFlush in one turn makes one flush at its end; onFlushed runs after the bytes went to the socket")
    func oneFlushPerTurn() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-flush")
        defer { group.shutdown() }
        let server = try TestServer(.http2, group: group)
        defer { server.close() }
        let probe = try ClientProbe(loop: group.next(), policy: .auto)
        probe.connect(port: server.port)
        #expect(await eventually { probe.snapshot.readyCount == 1 })

        struct Observed: Sendable {
            var flushes = 0
            var flushesDuringTurn = -1
            var flushesNextTurn = -1
            var handedOverBefore = 0
            var handedOverAtFlush: [Int] = []
        }
        let observed = Locked(Observed())
        probe.loop.execute {
            let transport = probe.transport!
            let connection = transport.connection!
            transport.onFlushed = {
                let handedOver = connection.bytesWritten + connection.pendingWriteBytes
                observed.withLock {
                    $0.flushes += 1
                    $0.handedOverAtFlush.append(handedOver)
                }
            }
            observed.withLock { $0.handedOverBefore = connection.bytesWritten + connection.pendingWriteBytes }
            probe.submitGet("/one")
            transport.setNeedsFlush()
            probe.submitGet("/two")
            transport.setNeedsFlush()
            transport.setNeedsFlush()
            observed.withLock { $0.flushesDuringTurn = $0.flushes }
            // A task queued by a task runs next turn, after this turn's end.
            probe.loop.execute { observed.withLock { $0.flushesNextTurn = $0.flushes } }
        }
        #expect(await eventually { observed.withLock { $0.flushesNextTurn >= 0 } })
        let seen = observed.withLock { $0 }
        #expect(seen.flushesDuringTurn == 0, "nothing is flushed before the end of the turn")
        #expect(seen.flushesNextTurn == 1, "three setNeedsFlush calls, one flush")
        #expect(seen.handedOverAtFlush.first.map { $0 > seen.handedOverBefore } == true)
        #expect(await eventually { probe.snapshot.answers.count == 2 })
        #expect(Set(server.requests.map(\.path)) == ["/one", "/two"])
    }

    @Test("a connect to a closed port fails naming the address; the transport is closed")
    func connectRefused() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-refused")
        defer { group.shutdown() }
        let port = try closedPort()
        let probe = try ClientProbe(loop: group.next(), policy: .auto)
        probe.connect(port: port)
        #expect(await eventually { probe.snapshot.connectResult != nil })
        let result = try #require(probe.snapshot.connectResult)
        #expect(result.hasPrefix("connect to 127.0.0.1:\(port): Connection refused"), "\(result)")
        #expect(await onLoop(probe.loop) { probe.transport.isClosed } == true)
        #expect(probe.snapshot.readyCount == 0)
    }

    @Test("a proxy that cannot be reached is named in the connect failure")
    func proxyRefused() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-noproxy")
        defer { group.shutdown() }
        let port = try closedPort()
        let probe = try ClientProbe(loop: group.next(), policy: .auto)
        probe.connect(port: 443, proxy: try HTTPProxy(url: "http://user:secret@127.0.0.1:\(port)"))
        #expect(await eventually { probe.snapshot.connectResult != nil })
        let result = try #require(probe.snapshot.connectResult)
        #expect(result.hasPrefix("proxy http://***@127.0.0.1:\(port): connect to 127.0.0.1:\(port)"), "\(result)")
        #expect(!result.contains("secret"))
    }

    @Test("close() before any connection tells the owner at once, with the error given")
    func closeBeforeConnecting() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-close")
        defer { group.shutdown() }
        let probe = try ClientProbe(loop: group.next(), policy: .auto)
        let closed = await onLoop(probe.loop) { () -> Bool in
            probe.transport.close(error: TransportError("given up"))
            probe.transport.close(error: TransportError("twice"))
            return probe.transport.isClosed
        }
        #expect(closed == true)
        #expect(probe.snapshot.closeCount == 1)
        #expect(probe.snapshot.closeError == "given up")
    }

    @Test("a closed HTTP/2 transport lets go of its owner and of the delegate its session held")
    func closeEndsTheCycle() async throws {
        let group = try EventLoopGroup(loopCount: 1, namePrefix: "transport-cycle")
        defer { group.shutdown() }
        let server = try TestServer(.http2, tls: false, group: group)
        defer { server.close() }
        let probe = try ClientProbe(cleartextHTTP2Loop: group.next())
        probe.connect(port: server.port)
        probe.get("/cycle")
        #expect(await eventually { probe.snapshot.answers.count == 1 })
        // The session holds its delegate strongly (no side table on it): a cycle while open.
        let open = await onLoop(probe.loop) {
            probe.transport.session.delegate === probe && probe.transport.owner != nil
        }
        #expect(open == true)
        probe.loop.execute { probe.transport.close(flushFirst: false) }
        #expect(await eventually { probe.snapshot.closeCount == 1 })
        let closed = await onLoop(probe.loop) {
            probe.transport.session.delegate == nil && probe.transport.owner == nil
        }
        #expect(closed == true)
    }
}
