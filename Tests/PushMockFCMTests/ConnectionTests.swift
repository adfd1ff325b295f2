import PushMockFCM
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock FCM: connections and streams", .timeLimit(.minutes(1)))
struct ConnectionTests {
    @Test("N sends in flight at once on one connection, within the advertised stream limit")
    func concurrentStreams() throws {
        let harness = try Harness { configuration in
            configuration.maxConcurrentStreams = 40
            configuration.responseDelay = .milliseconds(300)
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        #expect(client.serverMaxStreams == 40)
        let token = try harness.accessToken(client)
        let start = monotonic()
        let responses = try client.send(
            (0..<40).map { harness.sendRequest(accessToken: token, body: sendBody(token: "token-\($0)")) })
        let elapsed = monotonic() - start
        #expect(responses.allSatisfy { $0.status == 200 })
        // Served one after another, 40 answers would take 12 s; in parallel about one delay.
        #expect(elapsed < 2, "\(elapsed) s")
        let stats = harness.server.stats
        #expect(stats.maxInFlight == 40)
        #expect(stats.connectionsOpened == 1)
        #expect(stats.deliveredPerToken.count == 40)
        #expect(Set(stats.recentMessages.map(\.connectionID)) == [1])
    }

    @Test("each client connection is counted, and token requests separately from sends")
    func connectionCounts() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let first = try harness.client()
        let second = try harness.client()
        let token = try harness.accessToken(first)
        #expect(try second.send(harness.sendRequest(accessToken: token)).status == 200, "tokens work on any connection")
        first.close()
        #expect(eventually { harness.server.stats.connectionsClosed == 1 })
        let stats = harness.server.stats
        #expect(stats.connectionsOpened == 2)
        #expect(stats.tokenRequests == 1)
        #expect(stats.sendRequests == 1)
    }

    @Test("GOAWAY after N streams: those N are answered, then the connection closes")
    func goAway() throws {
        let harness = try Harness { $0.goAwayAfterStreams = 3 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let responses = try client.send([
            harness.sendRequest(accessToken: token), harness.sendRequest(accessToken: token),
        ])
        #expect(responses.allSatisfy { $0.status == 200 })
        #expect(client.goAwayLastStreamID == 5, "streams 1 (token), 3 and 5")
        #expect(eventually { client.isClosed })
        #expect(harness.server.stats.goAwaysSent == 1)
    }

    @Test("server close sends GOAWAY and closes idle connections")
    func serverClose() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        _ = try harness.accessToken(client)
        harness.server.close()
        #expect(eventually { client.isClosed })
        #expect(client.goAwayLastStreamID == 1)
    }
}
