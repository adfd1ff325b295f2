import PushCore
import PushCredentials
import PushMockHMS
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock HMS: v3 and v1 send bodies", .timeLimit(.minutes(1)))
struct SendTests {
    @Test("v3: push-type 0 and 6 with their payloads are accepted; recorded with their tokens")
    func v3Success() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try makeJWT()
        let background = Array(#"{"payload":{"extraData":"{\"k\":1}"},"target":{"token":["b1"]}}"#.utf8)
        let responses = try client.send([
            harness.v3(jwt: jwt, body: v3Body(["a1", "a2"], extra: #","pushOptions":{"ttl":86400,"biTag":"x"}"#)),
            harness.v3(jwt: jwt, body: background, pushType: "6"),
        ])
        #expect(responses.map(\.status) == [200, 200])
        #expect(responses.map(\.code) == ["80000000", "80000000"])
        #expect(responses[0].header("content-type") == "application/json;charset=UTF-8")
        let stats = harness.server.stats
        #expect(stats.deliveredPerToken == ["a1": 1, "a2": 1, "b1": 1])
        let recorded = stats.recentMessages.sorted { $0.streamID < $1.streamID }
        #expect(recorded.map(\.pushType) == [0, 6])
        #expect(recorded.last?.body == background)
    }

    @Test(
        "v3 refusals: push-type, payload, token count, size, test messages",
        arguments: [
            ("no push-type", 400, "80100001"), ("push-type abc", 400, "80100001"), ("push-type 3", 400, "80100001"),
            ("not JSON", 400, "80100001"), ("no payload", 400, "80100003"), ("no notification", 400, "80100003"),
            ("bad category", 400, "80100003"), ("no clickAction", 400, "80100003"),
            ("6 without extraData", 400, "80100003"),
            ("no target", 400, "80300010"), ("no tokens", 400, "80300010"), ("1001 tokens", 400, "80300010"),
            ("too long", 400, "80300008"), ("test message to 11", 400, "80300030"),
        ])
    func v3Refused(_ scenario: String, status: Int, code: String) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try makeJWT()
        let notification = #"{"category":"IM","title":"Hi","body":"b","clickAction":{"actionType":0}}"#
        var pushType: String? = "0"
        var body: [UInt8]
        switch scenario {
        case "no push-type": (pushType, body) = (nil, v3Body(["t"]))
        case "push-type abc": (pushType, body) = ("abc", v3Body(["t"]))
        case "push-type 3": (pushType, body) = ("3", v3Body(["t"]))
        case "not JSON": body = Array("{".utf8)
        case "no payload": body = Array(#"{"target":{"token":["t"]}}"#.utf8)
        case "no notification": body = Array(#"{"payload":{},"target":{"token":["t"]}}"#.utf8)
        case "bad category":
            body = Array(
                #"{"payload":{"notification":{"category":"NEWS","title":"Hi","body":"b","clickAction":{"actionType":0}}},"target":{"token":["t"]}}"#
                    .utf8)
        case "no clickAction":
            body = Array(
                #"{"payload":{"notification":{"category":"IM","title":"Hi","body":"b"}},"target":{"token":["t"]}}"#.utf8
            )
        case "6 without extraData": (pushType, body) = ("6", v3Body(["t"]))
        case "no target": body = Array(#"{"payload":{"notification":\#(notification)}}"#.utf8)
        case "no tokens": body = v3Body([])
        case "1001 tokens": body = v3Body((0...1000).map { "t\($0)" })
        case "too long":
            body = v3Body(["t"], extra: #","pushOptions":{"biTag":"\#(String(repeating: "x", count: 4000))"}"#)
        default: body = v3Body((0..<11).map { "t\($0)" }, extra: #","pushOptions":{"testMessage":true}"#)
        }
        let response = try client.send(harness.v3(jwt: jwt, body: body, pushType: pushType))
        #expect(response.status == status, "\(scenario): \(response.text)")
        #expect(response.code == code, "\(scenario)")
        #expect(harness.server.stats.accepted == 0)
    }

    @Test("v3: 1000 tokens are fine, and their bytes do not count towards the 4096")
    func v3TokensNotCounted() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let tokens = (0..<1000).map { "MAMzLgE4G98BAAAA" + String(repeating: "x", count: 80) + String($0) }
        let body = v3Body(tokens, extra: #","pushOptions":{"biTag":"\#(String(repeating: "x", count: 3800))"}"#)
        #expect(body.count > 90_000)
        let response = try client.send(harness.v3(jwt: try makeJWT(), body: body))
        #expect(response.code == "80000000", "\(response.text.prefix(200))")
        #expect(harness.server.stats.tokensDelivered == 1000)
    }

    @Test("v1: notification, android and data messages and topics are accepted; validate_only is not delivered")
    func v1Success() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let android = #""android":{"urgency":"HIGH","notification":{"title":"T","body":"B","click_action":{"type":3}}}"#
        let responses = try client.send([
            harness.v1(accessToken: token, body: v1Body(["n1"])),
            harness.v1(accessToken: token, body: v1Body(["a1", "a2"], fields: android)),
            harness.v1(accessToken: token, body: v1Body(["d1"], fields: #""data":"{\"k\":\"v\"}""#)),
            harness.v1(accessToken: token, body: v1Body(["v1"], validateOnly: true)),
            harness.v1(accessToken: token, body: Array(#"{"message":{"data":"x","topic":"news"}}"#.utf8)),
        ])
        #expect(responses.map(\.code) == Array(repeating: "80000000", count: 5), "\(responses.map(\.text))")
        let stats = harness.server.stats
        #expect(stats.accepted == 4 && stats.validatedOnly == 1)
        #expect(stats.deliveredPerToken == ["n1": 1, "a1": 1, "a2": 1, "d1": 1])
        #expect(stats.recentMessages.allSatisfy { $0.api == "v1" && $0.pushType == nil })
    }

    @Test(
        "v1 refusals",
        arguments: [
            (#"{"validate_only":false}"#, "80300010"), (#"{"message":{"notification":{}}}"#, "80300010"),
            (#"{"message":{"token":[]}}"#, "80300010"),
            (#"{"validate_only":"no","message":{"token":["t"]}}"#, "80100001"),
            (#"{"message":{"token":["t"],"topic":"x"}}"#, "80100001"),
            (#"{"message":{"token":["t"],"data":{}}}"#, "80100003"),
            (#"{"message":{"token":["t"],"android":{"notification":{"title":"x"}}}}"#, "80100003"),
            (#"{"message":{"token":[1]}}"#, "80100001"),
        ])
    func v1Refused(body: String, code: String) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let response = try client.send(harness.v1(accessToken: token, body: Array(body.utf8)))
        #expect(response.status == 400, "\(body): \(response.text)")
        #expect(response.code == code, "\(body)")
    }

    @Test("a repeated body is answered from the last valid one, and still counted per request")
    func repeatedBody() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try makeJWT()
        let responses = try client.send(Array(repeating: harness.v3(jwt: jwt, body: v3Body(["same"])), count: 5))
        #expect(responses.allSatisfy { $0.code == "80000000" })
        // The same bytes under another push-type are checked again: an alert payload is no background one.
        let other = try client.send(harness.v3(jwt: jwt, body: v3Body(["same"]), pushType: "6"))
        #expect(other.code == "80100003")
        #expect(harness.server.stats.deliveredPerToken == ["same": 5])
    }

    @Test("a body that differs from the last valid one only in its token is valid, its own token counted")
    func anotherToken() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try makeJWT()
        let bodies = ["tok-a", "tok-b", "tok-c"].map { harness.v3(jwt: jwt, body: v3Body([$0])) }
        #expect(try client.send(bodies).allSatisfy { $0.code == "80000000" })
        #expect(harness.server.stats.deliveredPerToken == ["tok-a": 1, "tok-b": 1, "tok-c": 1])
        // Around a "token" holding quotes the body is parsed: two tokens, x and y, each counted.
        #expect(try client.send(harness.v3(jwt: jwt, body: v3Body([#"x","y"#]))).code == "80000000")
        #expect(harness.server.stats.deliveredPerToken["x"] == 1 && harness.server.stats.deliveredPerToken["y"] == 1)
    }

    @Test("other paths and methods are 404")
    func notFound() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let responses = try client.send([
            H2Request(path: "/v2/1/messages:send"), H2Request(path: "/v3/a/b/messages:send"),
            H2Request(method: "GET", path: "/v3/\(testAccount.projectID)/messages:send"),
        ])
        #expect(responses.map(\.status) == [404, 404, 404])
        #expect(harness.server.stats.count(error: "NotFound") == 3)
    }
}
