import PushHTTP2
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock listener over loopback", .timeLimit(.minutes(1)))
struct MockHTTP2ServerTests {
    @Test("HTTP/2: the handler gets the request whole; the client gets its answer; the events are counted")
    func http2Request() throws {
        let loopback = try LoopbackServer(answer: { _ in
            .json(201, Array("made".utf8), statsError: "Created", contentType: "text/plain").retryingAfter(3)
        })
        defer { loopback.shutdown() }
        #expect(loopback.server.baseURL == "https://127.0.0.1:\(loopback.server.localPort)")
        let client = try loopback.h2Client()
        #expect(client.serverMaxStreams == 100)
        let response = try client.send(
            H2Request(
                path: "/v1/things?x=1", headers: [("content-type", "application/json"), ("x-extra", "yes")],
                body: Array(#"{"a":1}"#.utf8)))
        #expect(response.status == 201)
        #expect(response.header("content-type") == "text/plain")
        #expect(response.header("retry-after") == "3")
        #expect(response.text == "made")

        let request = try #require(loopback.handler.received.first)
        #expect(request.method == "POST")
        #expect(request.path == "/v1/things?x=1")
        #expect(request.route == "/v1/things")
        #expect(request.authority == client.authority)
        #expect(request.headers == ["content-type": "application/json", "x-extra": "yes"], "no pseudo-headers")
        #expect(request.body == Array(#"{"a":1}"#.utf8))
        #expect(request.bodyLength == 7)
        #expect(request.connectionID == 1)
        #expect(request.streamID == 1)

        let second = try loopback.h2Client()
        #expect(try second.send(H2Request(method: "GET", path: "/again")).status == 201)
        #expect(loopback.handler.received.last?.connectionID == 2, "connections are numbered in accept order")
        #expect(loopback.handler.received.last?.method == "GET")

        let stats = loopback.stats.snapshot()
        #expect(stats.connectionsOpened == 2)
        #expect(stats.streamsOpened == 2)
        #expect(stats.requests == 2)
        #expect(stats.count(status: 201) == 2)
        #expect(stats.count(error: "Created") == 2)
        client.close()
        #expect(eventually { loopback.stats.snapshot().connectionsClosed == 1 })
        #expect(loopback.stats.snapshot().handshakeFailures == 0)
    }

    @Test("HTTP/2: a body over maxBodyBytes is cut at maxBodyBytes + 1 and answered at once, its length counted")
    func http2BodyLimit() throws {
        let loopback = try LoopbackServer { $0.maxBodyBytes = 100 }
        defer { loopback.shutdown() }
        let client = try loopback.h2Client()
        let response = try client.send(H2Request(path: "/big", body: [UInt8](repeating: 0x61, count: 5000)))
        #expect(response.status == 200)
        let request = try #require(loopback.handler.received.first)
        #expect(request.body.count == 101)
        #expect(request.bodyLength > 100)
        #expect(loopback.handler.received.count == 1, "handled once")
    }

    @Test("HTTP/2: the settings' stream limit is advertised, and GOAWAY follows the Nth stream")
    func http2GoAway() throws {
        let loopback = try LoopbackServer {
            $0.maxConcurrentStreams = 7
            $0.goAwayAfterStreams = 2
        }
        defer { loopback.shutdown() }
        let client = try loopback.h2Client()
        #expect(client.serverMaxStreams == 7)
        let responses = try client.send([H2Request(path: "/1"), H2Request(path: "/2")])
        #expect(responses.map(\.status) == [200, 200])
        #expect(client.goAwayLastStreamID == 3)
        #expect(eventually { client.isClosed })
        #expect(loopback.stats.snapshot().goAwaysSent == 1)
    }

    @Test("HTTP/2: the response delay holds each answer back at least that long")
    func http2Delay() throws {
        let loopback = try LoopbackServer { $0.responseDelay = .milliseconds(250) }
        defer { loopback.shutdown() }
        let client = try loopback.h2Client()
        let start = monotonic()
        let responses = try client.send((0..<5).map { H2Request(path: "/\($0)") })
        let elapsed = monotonic() - start
        #expect(responses.allSatisfy { $0.status == 200 })
        #expect(elapsed >= 0.24, "\(elapsed) s")
        #expect(elapsed < 2, "answered in parallel: \(elapsed) s")
    }

    @Test("HTTP/1.1: requests on one kept-alive connection, Host as the authority, streams numbered 1, 3, 5")
    func http1Requests() throws {
        let loopback = try LoopbackServer(
            { $0.http1 = true },
            answer: { request in
                request.route == "/missing"
                    ? MockResponse.json(404, Array("no".utf8), statsError: "NotFound") : .json(200, request.body)
            })
        defer { loopback.shutdown() }
        let client = try loopback.h1Client()
        let first = try client.send(
            path: "/messaging/a?q=1", headers: [("Content-Type", "application/json"), ("X-Amzn-Type-Version", "1")],
            body: Array("hello".utf8))
        #expect(first.status == 200)
        #expect(first.text == "hello")
        #expect(first.keepAlive)
        #expect(first.header("content-type") == MockResponse.googleJSON)
        let second = try client.send(method: "GET", path: "/missing")
        #expect(second.status == 404)
        #expect(second.text == "no")
        let third = try client.send(path: "/three", body: [UInt8](repeating: 0x62, count: 3000))
        #expect(third.status == 200)

        let requests = loopback.handler.received
        #expect(requests.map(\.method) == ["POST", "GET", "POST"])
        #expect(requests.map(\.path) == ["/messaging/a?q=1", "/missing", "/three"])
        #expect(requests.map(\.streamID) == [1, 3, 5])
        #expect(Set(requests.map(\.connectionID)) == [1])
        #expect(requests[0].authority == "127.0.0.1")
        #expect(requests[0].headers["host"] == nil, "Host is the authority, not a header")
        #expect(requests[0].headers["content-type"] == "application/json", "names lowercased")
        #expect(requests[0].headers["x-amzn-type-version"] == "1")
        #expect(requests[2].bodyLength == 3000 && requests[2].body.count == 3000)

        let stats = loopback.stats.snapshot()
        #expect(stats.connectionsOpened == 1)
        #expect(stats.streamsOpened == 3)
        #expect(stats.count(status: 200) == 2 && stats.count(status: 404) == 1)
        #expect(stats.count(error: "NotFound") == 1)
    }

    @Test("HTTP/1.1: after goAwayAfterStreams requests the answer says Connection: close and the connection ends")
    func http1GoAway() throws {
        let loopback = try LoopbackServer {
            $0.http1 = true
            $0.goAwayAfterStreams = 2
        }
        defer { loopback.shutdown() }
        let client = try loopback.h1Client()
        #expect(try client.send(path: "/1").keepAlive)
        let last = try client.send(path: "/2")
        #expect(last.status == 200)
        #expect(!last.keepAlive)
        #expect(last.header("connection")?.lowercased() == "close")
        #expect(eventually { client.isClosed })
        #expect(eventually { loopback.stats.snapshot().connectionsClosed == 1 })
        #expect(loopback.stats.snapshot().goAwaysSent == 1)
    }

    @Test("both versions: each connection speaks what its client chose by ALPN; close ends both kinds")
    func bothVersions() throws {
        let loopback = try LoopbackServer { $0.offersBothVersions = true }
        defer { loopback.shutdown() }
        let h2 = try loopback.h2Client()
        let h1 = try loopback.h1Client()
        #expect(try h2.send(H2Request(path: "/two")).status == 200)
        let answer = try h1.send(path: "/one", body: Array("hi".utf8))
        #expect(answer.status == 200)
        #expect(answer.text == #"{"path":"/one"}"#)
        #expect(try h2.send(H2Request(path: "/two-again")).status == 200)
        let requests = loopback.handler.received
        #expect(requests.map(\.path) == ["/two", "/one", "/two-again"])
        #expect(requests.map(\.connectionID) == [1, 2, 1])
        loopback.server.close()
        #expect(eventually { h2.isClosed && h1.isClosed })
        #expect(eventually { loopback.stats.snapshot().connectionsClosed == 2 })
        #expect(loopback.stats.snapshot().handshakeFailures == 0)
    }

    @Test("close: open connections get GOAWAY and are closed; the listener accepts no more")
    func serverClose() throws {
        let loopback = try LoopbackServer()
        defer { loopback.shutdown() }
        let client = try loopback.h2Client()
        #expect(try client.send(H2Request(path: "/x")).status == 200)
        loopback.server.close()
        #expect(eventually { client.isClosed })
        #expect(client.goAwayLastStreamID == 1)
        #expect(throws: (any Error).self) { try loopback.h2Client() }
    }

    @Test("baseURL names 127.0.0.1 for a wildcard listen address")
    func wildcardBaseURL() throws {
        let loopback = try LoopbackServer { $0.host = "0.0.0.0" }
        defer { loopback.shutdown() }
        #expect(loopback.server.baseURL == "https://127.0.0.1:\(loopback.server.localPort)")
        #expect(loopback.server.localPort > 0)
    }
}
