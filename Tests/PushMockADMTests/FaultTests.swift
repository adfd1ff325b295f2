import PushMockADM
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock ADM: registration-id rules and injected faults", .timeLimit(.minutes(1)))
struct FaultTests {
    @Test("listed and prefixed ids get 410 Unregistered or 400 InvalidRegistrationId; others are delivered")
    func registrationRules() throws {
        let harness = try Harness { configuration in
            configuration.unregisteredIDs = ["gone-1"]
            configuration.unregisteredPrefix = "dead-"
            configuration.invalidPrefix = "junk-"
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let responses = try client.send(
            ["gone-1", "dead-xyz", "junk-1", "alive"].map {
                harness.sendRequest(accessToken: token, registrationID: $0)
            })
        #expect(responses.map(\.status) == [410, 410, 400, 200])
        #expect(responses[0].text == #"{"reason":"Unregistered"}"#)
        #expect(responses[1].reason == "Unregistered")
        #expect(responses[2].text == #"{"reason":"InvalidRegistrationId"}"#)
        for response in responses {
            #expect(response.header("retry-after") == nil)
            #expect(response.header("x-amzn-requestid") != nil)
        }
        let stats = harness.server.stats
        #expect(stats.count(error: "Unregistered") == 2)
        #expect(stats.count(error: "InvalidRegistrationId") == 1)
        #expect(stats.delivered == 1)
        #expect(stats.recentMessages.map(\.registrationID) == ["alive"])
    }

    @Test("every 3rd valid send is 429 MaxRateExceeded with Retry-After")
    func rateLimitEvery() throws {
        let harness = try Harness { configuration in
            configuration.rateLimitEvery = 3
            configuration.retryAfterSeconds = 7
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        var statuses: [Int] = []
        for _ in 0..<6 {
            let response = try client.send(harness.sendRequest(accessToken: token))
            statuses.append(response.status ?? 0)
            if response.status == 429 {
                #expect(response.text == #"{"reason":"MaxRateExceeded"}"#)
                #expect(response.header("retry-after") == "7")
            } else {
                #expect(response.header("retry-after") == nil)
            }
        }
        #expect(statuses == [200, 200, 429, 200, 200, 429])
        #expect(harness.server.stats.count(error: "MaxRateExceeded") == 2)
    }

    @Test("invalid sends do not count towards the rate limit; Retry-After can be switched off")
    func rateLimitCountsValidSends() throws {
        let harness = try Harness { configuration in
            configuration.rateLimitEvery = 2
            configuration.retryAfterSeconds = nil
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let invalid = try client.send(harness.sendRequest(accessToken: token, body: admBody(data: "[]")))
        #expect(invalid.status == 400)
        #expect(try client.send(harness.sendRequest(accessToken: token)).status == 200)
        let limited = try client.send(harness.sendRequest(accessToken: token))
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") == nil)
    }

    @Test("fail-503 answers ServiceUnavailable with Retry-After, fail-500 InternalServerError without")
    func serverFaults() throws {
        let unavailable = try Harness { $0.fail503Share = 1 }
        defer { unavailable.shutdown() }
        let first = try unavailable.client()
        let down = try first.send(unavailable.sendRequest(accessToken: try unavailable.accessToken(first)))
        #expect(down.status == 503)
        #expect(down.text == #"{"reason":"ServiceUnavailable"}"#)
        #expect(down.header("retry-after") == "1")

        let broken = try Harness { $0.fail500Share = 1 }
        defer { broken.shutdown() }
        let second = try broken.client()
        let failed = try second.send(broken.sendRequest(accessToken: try broken.accessToken(second)))
        #expect(failed.status == 500)
        #expect(failed.text == #"{"reason":"InternalServerError"}"#)
        #expect(failed.header("retry-after") == nil)
        #expect(broken.server.stats.delivered == 0)
    }

    @Test("a 500 share is reproducible for a seed and near its share")
    func reproducibleShare() throws {
        func failures() throws -> Int {
            let harness = try Harness { $0.fail500Share = 0.5 }
            defer { harness.shutdown() }
            let client = try harness.client()
            let token = try harness.accessToken(client)
            let responses = try client.send(Array(repeating: harness.sendRequest(accessToken: token), count: 80))
            #expect(responses.allSatisfy { $0.status == 200 || $0.status == 500 })
            return responses.filter { $0.status == 500 }.count
        }
        let first = try failures()
        #expect(first == (try failures()))
        #expect((20...60).contains(first), "\(first) of 80 at a 0.5 share")
    }
}
