import Glibc
import PushCore
import PushMockFCM
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock FCM: messages:send", .timeLimit(.minutes(1)))
struct SendTests {
    @Test("a valid send gets 200 and a unique message name; stats and recorded messages follow")
    func success() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let responses = try client.send([
            harness.sendRequest(accessToken: token), harness.sendRequest(accessToken: token),
            harness.sendRequest(
                accessToken: token, body: Array(#"{"message":{"topic":"news","notification":{"title":"t"}}}"#.utf8)),
        ])
        var names: [String] = []
        for response in responses {
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("content-type") == "application/json; charset=UTF-8")
            guard case .string(let name)? = response.json?["name"] else { continue }
            #expect(name.hasPrefix("projects/\(testProject)/messages/0:"))
            #expect(response.json?.objectMembers?.count == 1)
            names.append(name)
        }
        #expect(Set(names).count == 3)
        let stats = harness.server.stats
        #expect(stats.sendRequests == 3)
        #expect(stats.delivered == 3)
        #expect(stats.deliveredPerToken == [sampleToken: 2])
        #expect(stats.recentMessages.map(\.targetKind).sorted() == ["token", "token", "topic"])
        #expect(stats.recentMessages.first { $0.targetKind == "token" }?.body == sendBody())
        #expect(Set(stats.recentMessages.map(\.name)) == Set(names))
        #expect(stats.count(status: 200) == 4, "3 sends and the token exchange")
    }

    @Test("validate_only answers FCM's fixed fake_message_id and is not counted as delivered")
    func validateOnly() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(
            harness.sendRequest(accessToken: try harness.accessToken(client), body: sendBody(validateOnly: true)))
        #expect(response.status == 200)
        #expect(response.json?["name"] == .string("projects/\(testProject)/messages/fake_message_id"))
        #expect(harness.server.stats.validatedOnly == 1)
        #expect(harness.server.stats.delivered == 0)
    }

    static let unauthenticatedBody =
        #"{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.","status":"UNAUTHENTICATED"}}"#

    @Test("no token, an unknown one, a malformed header and a revoked token all get FCM's exact 401")
    func unauthenticated() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        var requests = [
            harness.sendRequest(accessToken: nil), harness.sendRequest(accessToken: "ya29.made-up"),
            harness.sendRequest(accessToken: String(token.dropLast())),
        ]
        requests.append(H2Request(path: requests[0].path, headers: [("authorization", token)], body: sendBody()))
        for response in try client.send(requests) {
            #expect(response.status == 401)
            #expect(response.text == Self.unauthenticatedBody)
            #expect(response.fcmErrorCode == nil, "an OAuth failure, not an FCM error code")
        }
        #expect(try client.send(harness.sendRequest(accessToken: token)).status == 200, "the real token still works")
        harness.server.revokeAccessTokens()
        #expect(try client.send(harness.sendRequest(accessToken: token)).status == 401)
        #expect(harness.server.stats.count(error: "UNAUTHENTICATED") == 5)
    }

    @Test("an access token is refused once its expires_in has passed")
    func expiredToken() throws {
        let harness = try Harness { $0.accessTokenLifetime = 1 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        #expect(try client.send(harness.sendRequest(accessToken: token)).status == 200)
        usleep(1_100_000)
        let expired = try client.send(harness.sendRequest(accessToken: token))
        #expect(expired.status == 401)
        #expect(expired.fcmStatus == "UNAUTHENTICATED")
        #expect(try client.send(harness.sendRequest(accessToken: try harness.accessToken(client))).status == 200)
    }

    @Test("another project is 403 PERMISSION_DENIED without an FCM error code; unknown paths 404")
    func projectAndPath() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let other = try client.send(harness.sendRequest(accessToken: token, project: "someone-else"))
        #expect(other.status == 403)
        #expect(other.fcmStatus == "PERMISSION_DENIED")
        #expect(other.fcmErrorCode == nil)
        let unknown = try client.send(H2Request(method: "GET", path: "/v1/projects/\(testProject)/messages:send"))
        #expect(unknown.status == 404)
        #expect(unknown.fcmStatus == "NOT_FOUND")
    }

    struct Invalid: Sendable, CustomTestStringConvertible {
        let name: String
        let body: [UInt8]
        let field: String?
        var testDescription: String { name }
    }

    static let invalid: [Invalid] = [
        Invalid(name: "not JSON", body: Array(#"{"message":"#.utf8), field: nil),
        Invalid(name: "an array", body: Array("[]".utf8), field: nil),
        Invalid(
            name: "unknown top-level member", body: Array(#"{"message":{"token":"t"},"dry_run":true}"#.utf8),
            field: "dry_run"),
        Invalid(name: "no message", body: Array(#"{"validate_only":true}"#.utf8), field: "message"),
        Invalid(
            name: "validate_only not a bool", body: Array(#"{"message":{"token":"t"},"validate_only":"yes"}"#.utf8),
            field: "validate_only"),
        Invalid(name: "no target", body: Array(#"{"message":{"data":{"a":"b"}}}"#.utf8), field: "message"),
        Invalid(
            name: "token and topic", body: Array(#"{"message":{"token":"t","topic":"news"}}"#.utf8), field: "message"),
        Invalid(
            name: "topic and condition", body: Array(#"{"message":{"topic":"a","condition":"'a' in topics"}}"#.utf8),
            field: "message"),
        Invalid(name: "empty token", body: sendBody(token: ""), field: "message.token"),
        Invalid(name: "token not a string", body: Array(#"{"message":{"token":42}}"#.utf8), field: "message.token"),
        Invalid(
            name: "topic with /topics/", body: Array(#"{"message":{"topic":"/topics/news"}}"#.utf8),
            field: "message.topic"),
        Invalid(
            name: "number in data", body: sendBody(extra: #","data":{"a":"1","b":2}"#), field: "message.data[1].value"),
        Invalid(
            name: "bool in android.data", body: sendBody(extra: #","android":{"data":{"a":true}}"#),
            field: "message.android.data[0].value"),
        Invalid(name: "data not an object", body: sendBody(extra: #","data":["a"]"#), field: "message.data"),
        Invalid(name: "reserved data key", body: sendBody(extra: #","data":{"google.x":"1"}"#), field: "message.data"),
        Invalid(name: "4097 bytes besides the token", body: paddedBody(payloadBytes: 4097), field: "message"),
    ]

    @Test("each validation failure is 400 INVALID_ARGUMENT with FcmError and BadRequest details", arguments: invalid)
    func validation(_ testCase: Invalid) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(
            harness.sendRequest(accessToken: try harness.accessToken(client), body: testCase.body))
        #expect(response.status == 400, "\(response.text)")
        #expect(response.json?["error"]?["code"] == .number("400"))
        #expect(response.fcmStatus == "INVALID_ARGUMENT")
        #expect(response.fcmErrorCode == "INVALID_ARGUMENT")
        #expect(response.violatedField == testCase.field, "\(response.text)")
        guard case .array(let details)? = response.json?["error"]?["details"] else {
            Issue.record("no details")
            return
        }
        #expect(details.count == 2)
        #expect(details.last?["@type"] == .string("type.googleapis.com/google.rpc.BadRequest"))
        #expect(harness.server.stats.delivered == 0)
    }

    @Test("the 4096-byte limit excludes the token: 4096 bytes besides a 300-byte token pass")
    func sizeLimitExcludesToken() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let body = paddedBody(payloadBytes: 4096, token: String(repeating: "t", count: 300))
        #expect(body.count == 4396)
        let response = try client.send(harness.sendRequest(accessToken: try harness.accessToken(client), body: body))
        #expect(response.status == 200, "\(response.text)")
    }
}

/// A send body whose length minus the token's is exactly `payloadBytes` (padding in one data value).
func paddedBody(payloadBytes: Int, token: String = sampleToken) -> [UInt8] {
    let empty = sendBody(token: token, extra: #","data":{"pad":""}"#)
    let fill = payloadBytes - (empty.count - token.utf8.count)
    precondition(fill >= 0)
    return sendBody(token: token, extra: #","data":{"pad":"\#(String(repeating: "x", count: fill))"}"#)
}
