import Glibc
import PushCore
import PushMockADM
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock ADM: sends", .timeLimit(.minutes(1)))
struct SendTests {
    @Test("a valid send gets 200, the registration id back and a request id; stats and recorded messages follow")
    func success() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let full = admBody(data: #"{"from":"Sam","n":"1"}"#, extra: #","consolidationKey":"Sync","expiresAfter":86400"#)
        let responses = try client.send([
            harness.sendRequest(accessToken: token),
            harness.sendRequest(accessToken: token, registrationID: "second", body: full),
        ])
        for response in responses {
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("content-type") == "application/json")
        }
        #expect(responses[0].text == #"{"registrationID":"\#(sampleRegistrationID)"}"#)
        #expect(responses[1].text == #"{"registrationID":"second"}"#)
        let requestIDs = responses.compactMap { $0.header("x-amzn-requestid") }
        #expect(requestIDs.count == 2 && Set(requestIDs).count == 2)
        for id in requestIDs {
            #expect(id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12], "\(id)")
            #expect(id.allSatisfy { $0 == "-" || $0.isHexDigit })
        }
        let stats = harness.server.stats
        #expect(stats.sendRequests == 2)
        #expect(stats.delivered == 2)
        #expect(stats.canonicalIDs == 0)
        #expect(stats.count(status: 200) == 3, "2 sends and the token exchange")
        let recorded = stats.recentMessages.sorted { $0.streamID < $1.streamID }
        #expect(recorded.map(\.registrationID) == [sampleRegistrationID, "second"])
        #expect(recorded.last?.body == full)
        #expect(Set(recorded.map(\.requestID)) == Set(requestIDs))
        #expect(recorded.allSatisfy { !$0.isCanonical && $0.connectionID == 1 })
    }

    @Test("replaced ids (listed, or by prefix) are delivered and answered with their canonical id")
    func canonicalIDs() throws {
        let harness = try Harness { configuration in
            configuration.canonicalIDs = ["old-device": "new-device"]
            configuration.canonicalPrefix = "stale-"
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let ids = ["old-device", "stale-abc", "fresh"]
        let responses = try client.send(ids.map { harness.sendRequest(accessToken: token, registrationID: $0) })
        #expect(responses.map(\.status) == [200, 200, 200])
        #expect(
            responses.map(\.text) == ["new-device", "abc-canonical", "fresh"].map { #"{"registrationID":"\#($0)"}"# })
        let stats = harness.server.stats
        #expect(stats.delivered == 3)
        #expect(stats.canonicalIDs == 2)
        let canonical = stats.recentMessages.filter(\.isCanonical).map {
            "\($0.registrationID)→\($0.answeredRegistrationID)"
        }
        #expect(canonical.sorted() == ["old-device→new-device", "stale-abc→abc-canonical"])
    }

    @Test("a percent-encoded registration id is decoded; a malformed escape is InvalidRegistrationId")
    func encodedRegistrationID() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let responses = try client.send([
            harness.sendRequest(accessToken: token, registrationID: "a%2Fb%3D%3D"),
            harness.sendRequest(accessToken: token, registrationID: "bad%zz"),
        ])
        #expect(responses[0].text == #"{"registrationID":"a/b=="}"#)
        #expect(responses[1].status == 400 && responses[1].reason == "InvalidRegistrationId")
    }

    @Test("no token, an unknown one, a malformed header, a revoked and an expired token all get 401 AccessTokenExpired")
    func unauthenticated() throws {
        let harness = try Harness { $0.accessTokenLifetime = 1 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        var requests = [
            harness.sendRequest(accessToken: nil), harness.sendRequest(accessToken: "Atc|made-up"),
            harness.sendRequest(accessToken: String(token.dropLast())),
        ]
        requests.append(H2Request(path: requests[0].path, headers: [("authorization", token)], body: admBody()))
        var responses = try client.send(requests)
        #expect(try client.send(harness.sendRequest(accessToken: token)).status == 200, "the real token works")
        harness.server.revokeAccessTokens()
        responses.append(try client.send(harness.sendRequest(accessToken: token)))
        let fresh = try harness.accessToken(client)
        usleep(1_100_000)
        responses.append(try client.send(harness.sendRequest(accessToken: fresh)))
        for response in responses {
            #expect(response.status == 401)
            #expect(response.text == #"{"reason":"AccessTokenExpired"}"#)
            #expect(response.header("x-amzn-requestid") != nil)
        }
        #expect(harness.server.stats.count(error: "AccessTokenExpired") == 6)
        #expect(try client.send(harness.sendRequest(accessToken: try harness.accessToken(client))).status == 200)
    }

    struct Invalid: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let reason: String
        let request: @Sendable (Harness, String) -> H2Request
        var testDescription: String { name }

        init(_ name: String, _ reason: String, status: Int = 400, body: [UInt8]) {
            self.init(name, reason, status: status) { $0.sendRequest(accessToken: $1, body: body) }
        }

        init(
            _ name: String, _ reason: String, status: Int = 400,
            request: @escaping @Sendable (Harness, String) -> H2Request
        ) {
            self.name = name
            self.status = status
            self.reason = reason
            self.request = request
        }
    }

    static let invalid: [Invalid] = [
        Invalid("no X-Amzn-Type-Version", "InvalidTypeVersion") { $0.sendRequest(accessToken: $1, typeVersion: nil) },
        Invalid("another type version", "InvalidTypeVersion") {
            $0.sendRequest(accessToken: $1, typeVersion: "com.amazon.device.messaging.ADMMessage@2.0")
        },
        Invalid("no X-Amzn-Accept-Type", "InvalidAcceptType") { $0.sendRequest(accessToken: $1, acceptType: nil) },
        Invalid("another accept type", "InvalidAcceptType") {
            $0.sendRequest(accessToken: $1, acceptType: "application/json")
        },
        Invalid("not JSON", "InvalidData", body: Array(#"{"data":"#.utf8)),
        Invalid("an array", "InvalidData", body: Array("[]".utf8)),
        Invalid("no data", "InvalidData", body: Array(#"{"consolidationKey":"Sync"}"#.utf8)),
        Invalid("data not an object", "InvalidData", body: admBody(data: #"["a"]"#)),
        Invalid("a number in data", "InvalidData", body: admBody(data: #"{"a":"1","b":2}"#)),
        Invalid("an object in data", "InvalidData", body: admBody(data: #"{"a":{"b":"c"}}"#)),
        Invalid(
            "65-character consolidationKey", "InvalidConsolidationKey",
            body: admBody(extra: #","consolidationKey":"\#(String(repeating: "k", count: 65))""#)),
        Invalid(
            "consolidationKey not a string", "InvalidConsolidationKey", body: admBody(extra: #","consolidationKey":7"#)),
        Invalid("expiresAfter 0", "InvalidExpiration", body: admBody(extra: #","expiresAfter":0"#)),
        Invalid("expiresAfter over 30 days", "InvalidExpiration", body: admBody(extra: #","expiresAfter":2592001"#)),
        Invalid("expiresAfter a fraction", "InvalidExpiration", body: admBody(extra: #","expiresAfter":60.5"#)),
        Invalid("expiresAfter a string", "InvalidExpiration", body: admBody(extra: #","expiresAfter":"60""#)),
        Invalid("md5 not base64 of 16 bytes", "InvalidChecksum", body: admBody(extra: #","md5":"abc""#)),
        Invalid("6145 bytes", "MessageTooLarge", status: 413, body: paddedBody(bytes: 6145)),
        Invalid("unknown path", "NotFound", status: 404) { harness, token in
            var request = harness.sendRequest(accessToken: token)
            request.path = "/messaging/registrations/x/messages/extra"
            return request
        },
    ]

    @Test("each invalid send gets its status and exactly {\"reason\":…}; nothing is delivered", arguments: invalid)
    func validation(_ testCase: Invalid) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(testCase.request(harness, try harness.accessToken(client)))
        #expect(response.status == testCase.status, "\(response.text)")
        #expect(response.text == #"{"reason":"\#(testCase.reason)"}"#)
        #expect(response.header("retry-after") == nil)
        let stats = harness.server.stats
        #expect(stats.delivered == 0)
        #expect(stats.count(error: testCase.reason) == 1)
    }

    @Test("the limits themselves pass: 6144 bytes, a 64-character key, expiresAfter 1 and 2592000, an empty data map")
    func limitsPass() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let bodies = [
            paddedBody(bytes: 6144), admBody(extra: #","consolidationKey":"\#(String(repeating: "é", count: 64))""#),
            admBody(extra: #","expiresAfter":1"#), admBody(extra: #","expiresAfter":2592000"#),
            admBody(data: "{}", extra: #","consolidationKey":"Sync","md5":"t5psxALRTM7WN30Q8f20tw==""#),
        ]
        #expect(bodies[0].count == 6144)
        let responses = try client.send(bodies.map { harness.sendRequest(accessToken: token, body: $0) })
        for response in responses { #expect(response.status == 200, "\(response.text)") }
    }
}

/// A valid send body exactly `bytes` long (padding in one data value).
func paddedBody(bytes: Int) -> [UInt8] {
    let fill = bytes - admBody(data: #"{"pad":""}"#).count
    precondition(fill >= 0)
    return admBody(data: #"{"pad":"\#(String(repeating: "x", count: fill))"}"#)
}
