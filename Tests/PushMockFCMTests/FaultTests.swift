import PushCore
import PushMockFCM
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock FCM: token rules and injected faults", .timeLimit(.minutes(1)))
struct FaultTests {
    static let unregisteredBody =
        #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#

    @Test(
        "listed and prefixed tokens get UNREGISTERED, SENDER_ID_MISMATCH or an invalid-token 400; topics are unaffected"
    )
    func tokenRules() throws {
        let harness = try Harness { configuration in
            configuration.unregisteredTokens = ["gone-1"]
            configuration.unregisteredPrefix = "dead-"
            configuration.mismatchedSenderTokens = ["other-project"]
            configuration.invalidTokens = ["garbage"]
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let responses = try client.send(
            ["gone-1", "dead-xyz", "other-project", "garbage", "alive"].map {
                harness.sendRequest(accessToken: token, body: sendBody(token: $0))
            } + [harness.sendRequest(accessToken: token, body: Array(#"{"message":{"topic":"dead-topic"}}"#.utf8))])
        #expect(responses[0].status == 404)
        #expect(responses[0].text == Self.unregisteredBody)
        #expect(responses[1].status == 404 && responses[1].fcmErrorCode == "UNREGISTERED")
        #expect(responses[2].status == 403 && responses[2].fcmErrorCode == "SENDER_ID_MISMATCH")
        #expect(responses[2].fcmStatus == "PERMISSION_DENIED")
        #expect(responses[3].status == 400 && responses[3].fcmErrorCode == "INVALID_ARGUMENT")
        #expect(responses[3].violatedField == "message.token")
        #expect(responses[4].status == 200)
        #expect(responses[5].status == 200)
        for response in responses { #expect(response.header("retry-after") == nil) }
        let stats = harness.server.stats
        #expect(stats.count(error: "UNREGISTERED") == 2)
        #expect(stats.count(error: "SENDER_ID_MISMATCH") == 1)
        #expect(stats.delivered == 2)
    }

    @Test("every 3rd send is 503 UNAVAILABLE with Retry-After")
    func unavailableEvery() throws {
        let harness = try Harness { $0.unavailableEvery = 3 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        var statuses: [Int] = []
        for _ in 0..<6 {
            let response = try client.send(harness.sendRequest(accessToken: token))
            statuses.append(response.status ?? 0)
            if response.status == 503 {
                #expect(response.header("retry-after") == "1")
                #expect(response.fcmErrorCode == "UNAVAILABLE")
                #expect(response.fcmStatus == "UNAVAILABLE")
            }
        }
        #expect(statuses == [200, 200, 503, 200, 200, 503])
        #expect(harness.server.stats.count(error: "UNAVAILABLE") == 2)
    }

    @Test("fail-429 and fail-500 shares answer QUOTA_EXCEEDED with Retry-After and INTERNAL without")
    func quotaAndInternal() throws {
        let quota = try Harness { configuration in
            configuration.fail429Share = 1
            configuration.retryAfterSeconds = 7
        }
        defer { quota.shutdown() }
        let quotaClient = try quota.client()
        let limited = try quotaClient.send(quota.sendRequest(accessToken: try quota.accessToken(quotaClient)))
        #expect(limited.status == 429)
        #expect(limited.fcmErrorCode == "QUOTA_EXCEEDED")
        #expect(limited.fcmStatus == "RESOURCE_EXHAUSTED")
        #expect(limited.header("retry-after") == "7")

        let broken = try Harness { $0.fail500Share = 1 }
        defer { broken.shutdown() }
        let brokenClient = try broken.client()
        let failed = try brokenClient.send(broken.sendRequest(accessToken: try broken.accessToken(brokenClient)))
        #expect(failed.status == 500)
        #expect(failed.fcmErrorCode == "INTERNAL")
        #expect(failed.header("retry-after") == nil)
    }

    @Test("a 503 share is reproducible for a seed and near its share")
    func reproducibleShare() throws {
        func unavailableCount() throws -> Int {
            let harness = try Harness { $0.fail503Share = 0.5 }
            defer { harness.shutdown() }
            let client = try harness.client()
            let token = try harness.accessToken(client)
            _ = try client.send(harness.sendRequest(accessToken: token, body: sendBody(token: "")))
            let responses = try client.send(Array(repeating: harness.sendRequest(accessToken: token), count: 80))
            #expect(responses.allSatisfy { $0.status == 200 || $0.status == 503 })
            return responses.filter { $0.status == 503 }.count
        }
        let first = try unavailableCount()
        #expect(first == (try unavailableCount()))
        #expect((20...60).contains(first), "\(first) of 80 at a 0.5 share")
    }

    @Test("the response delay holds each answer back")
    func delay() throws {
        let harness = try Harness { $0.responseDelay = .milliseconds(200) }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let start = monotonic()
        #expect(try client.send(harness.sendRequest(accessToken: token)).status == 200)
        #expect(monotonic() - start >= 0.19)
    }
}
