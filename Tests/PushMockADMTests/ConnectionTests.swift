import PushMockADM
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock ADM: connections and streams", .timeLimit(.minutes(1)))
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
            (0..<40).map { harness.sendRequest(accessToken: token, registrationID: "device-\($0)") })
        let elapsed = monotonic() - start
        #expect(responses.allSatisfy { $0.status == 200 })
        #expect(responses.map(\.text) == (0..<40).map { #"{"registrationID":"device-\#($0)"}"# })
        // Served one after another, 40 answers would take 12 s; in parallel about one delay.
        #expect(elapsed >= 0.29 && elapsed < 2, "\(elapsed) s")
        let stats = harness.server.stats
        #expect(stats.maxInFlight == 40)
        #expect(stats.connectionsOpened == 1)
        #expect(Set(stats.recentMessages.map(\.registrationID)).count == 40)
    }

    @Test("GOAWAY after N streams: those N are answered, then the connection closes")
    func goAway() throws {
        let harness = try Harness { $0.goAwayAfterStreams = 2 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        #expect(try client.send(harness.sendRequest(accessToken: token)).status == 200)
        #expect(client.goAwayLastStreamID == 3, "streams 1 (token) and 3")
        #expect(eventually { client.isClosed })
        let stats = harness.server.stats
        #expect(stats.goAwaysSent == 1)
        #expect(eventually { harness.server.stats.connectionsClosed == 1 })
    }

    @Test("the token and the sends may use different connections; close() ends them with GOAWAY")
    func connectionsAndClose() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let first = try harness.client()
        let second = try harness.client()
        let token = try harness.accessToken(first)
        #expect(try second.send(harness.sendRequest(accessToken: token)).status == 200)
        harness.server.close()
        #expect(eventually { first.isClosed && second.isClosed })
        let stats = harness.server.stats
        #expect(stats.connectionsOpened == 2)
        #expect(stats.tokenRequests == 1)
        #expect(stats.sendRequests == 1)
    }
}
