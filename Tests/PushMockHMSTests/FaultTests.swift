import PushCore
import PushMockHMS
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock HMS: invalid tokens and injected faults", .timeLimit(.minutes(1)))
struct FaultTests {
    @Test("v3: all tokens invalid is 400 80300007 naming them; some is 200 80100000 with success and failure")
    func v3BadTokens() throws {
        let harness = try Harness { configuration in
            configuration.badTokens = ["bad-1"]
            configuration.badTokenPrefix = "dead-"
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try makeJWT()
        let all = try client.send(harness.v3(jwt: jwt, body: v3Body(["bad-1"])))
        #expect(all.status == 400)
        #expect(all.code == "80300007")
        #expect(
            all.msgJSON
                == (try JSONParser.parse(Array(#"{"failure":1,"illegalTokens":{"tokenFormatError":["bad-1"]}}"#.utf8))))
        let some = try client.send(harness.v3(jwt: jwt, body: v3Body(["ok-1", "dead-x", "bad-1", "ok-2"])))
        #expect(some.status == 200)
        #expect(some.code == "80100000")
        #expect(
            some.msgJSON
                == (try JSONParser.parse(
                    Array(#"{"success":2,"failure":2,"illegalTokens":{"tokenFormatError":["dead-x","bad-1"]}}"#.utf8))))
        let stats = harness.server.stats
        #expect(stats.accepted == 1 && stats.partialSuccesses == 1)
        #expect(stats.tokensDelivered == 2 && stats.tokensRefused == 3)
        #expect(stats.deliveredPerToken == ["ok-1": 1, "ok-2": 1])
        #expect(stats.recentMessages.first?.failedTokens == ["dead-x", "bad-1"])
        #expect(stats.count(error: "80300007") == 1 && stats.count(error: "80100000") == 1)
    }

    @Test("v1: all invalid is 80300007 'All the tokens are invalid' (status configurable); some lists illegal_tokens")
    func v1BadTokens() throws {
        let harness = try Harness { configuration in
            configuration.badTokenPrefix = "dead-"
            configuration.allInvalidStatus = 200
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let all = try client.send(harness.v1(accessToken: token, body: v1Body(["dead-1"])))
        #expect(all.status == 200)
        #expect(all.code == "80300007")
        #expect(all.msg == "All the tokens are invalid")
        let some = try client.send(harness.v1(accessToken: token, body: v1Body(["dead-1", "live"])))
        #expect(some.status == 200 && some.code == "80100000")
        #expect(
            some.msgJSON
                == (try JSONParser.parse(Array(#"{"success":1,"failure":1,"illegal_tokens":["dead-1"]}"#.utf8))))
    }

    @Test("fail-503 is flow control: 503 without a body or Retry-After; fail-500 is 500 81000001")
    func serverFaults() throws {
        let flow = try Harness { $0.fail503Share = 1 }
        defer { flow.shutdown() }
        let first = try flow.client()
        let down = try first.send(flow.v3(jwt: try makeJWT(), body: v3Body(["t"])))
        #expect(down.status == 503)
        #expect(down.body.isEmpty)
        #expect(down.header("retry-after") == nil)
        #expect(flow.server.stats.count(error: "FlowControl") == 1)

        let broken = try Harness {
            $0.fail500Share = 1
            $0.retryAfterSeconds = 3
        }
        defer { broken.shutdown() }
        let second = try broken.client()
        let failed = try second.send(broken.v1(accessToken: try broken.accessToken(second), body: v1Body(["t"])))
        #expect(failed.status == 500)
        #expect(failed.code == "81000001" && failed.msg == "Inner Error.")
        #expect(broken.server.stats.accepted == 0)
    }

    @Test("faults apply only to valid sends, and a share is reproducible for a seed")
    func reproducibleShare() throws {
        func failures() throws -> Int {
            let harness = try Harness { $0.fail503Share = 0.5 }
            defer { harness.shutdown() }
            let client = try harness.client()
            let jwt = try makeJWT()
            #expect(try client.send(harness.v3(jwt: jwt, body: v3Body([]))).status == 400)
            let responses = try client.send((0..<80).map { harness.v3(jwt: jwt, body: v3Body(["t\($0)"])) })
            #expect(responses.allSatisfy { $0.status == 200 || $0.status == 503 })
            return responses.filter { $0.status == 503 }.count
        }
        let first = try failures()
        #expect(first == (try failures()))
        #expect((20...60).contains(first), "\(first) of 80 at a 0.5 share")
    }

    @Test("delay-ms holds each answer; sends in flight are answered in parallel over HTTP/2")
    func delay() throws {
        let harness = try Harness { $0.responseDelay = .milliseconds(300) }
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try makeJWT()
        let start = monotonic()
        let responses = try client.send((0..<20).map { harness.v3(jwt: jwt, body: v3Body(["t\($0)"])) })
        let elapsed = monotonic() - start
        #expect(responses.allSatisfy { $0.code == "80000000" })
        #expect(elapsed >= 0.29 && elapsed < 2, "\(elapsed) s")
    }
}
