import PushCore
import PushMockHMS
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock HMS: the OAuth 2.0 token endpoint and v1 access tokens", .timeLimit(.minutes(1)))
struct TokenEndpointTests {
    @Test("client credentials get a Bearer token of the configured lifetime; it authorizes v1 sends")
    func issued() throws {
        let harness = try Harness { $0.accessTokenLifetime = 600 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(harness.tokenRequest())
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json?["expires_in"] == .number("600"))
        #expect(response.jsonString("token_type") == "Bearer")
        let token = try #require(response.jsonString("access_token"))
        let send = try client.send(harness.v1(accessToken: token, body: v1Body(["t1"])))
        #expect(send.status == 200 && send.code == "80000000", "\(send.text)")
        let stats = harness.server.stats
        #expect(stats.tokenRequests == 1 && stats.tokensIssued == 1 && stats.v1Sends == 1)
    }

    @Test(
        "refusals are Huawei's {error:1101, sub_error} with 400",
        arguments: [
            ("abc", nil, 20002), ("999", nil, 20003), (nil, "", 20171), (nil, "wrong", 12304),
        ] as [(String?, String?, Int)])
    func refused(clientID: String?, secret: String?, subError: Int) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(harness.tokenRequest(clientID: clientID, clientSecret: secret))
        #expect(response.status == 400, "\(response.text)")
        #expect(response.json?["error"] == .number("1101"))
        #expect(response.json?["sub_error"] == .number(String(subError)))
        #expect(response.jsonString("error_description") != nil)
        #expect(harness.server.stats.tokensIssued == 0)
    }

    @Test("an expired or revoked access token is 401 80200003; an unknown one 401 80200001")
    func expiredAndUnknown() throws {
        let harness = try Harness { $0.accessTokenLifetime = 1 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        #expect(try client.send(harness.v1(accessToken: token, body: v1Body(["t"]))).code == "80000000")
        #expect(
            eventually(seconds: 5) {
                (try? client.send(harness.v1(accessToken: token, body: v1Body(["t"]))))?.code == "80200003"
            })
        let expired = try client.send(harness.v1(accessToken: token, body: v1Body(["t"])))
        #expect(expired.status == 401)
        #expect(expired.msg == "Access token expired")
        let unknown = try client.send(harness.v1(accessToken: "CgB6e3x9forged", body: v1Body(["t"])))
        #expect(unknown.status == 401 && unknown.code == "80200001")
        let missing = try client.send(harness.v1(accessToken: nil, body: v1Body(["t"])))
        #expect(missing.status == 401 && missing.code == "80200001")

        let revoking = try Harness()
        defer { revoking.shutdown() }
        let second = try revoking.client()
        let fresh = try revoking.accessToken(second)
        revoking.server.revokeAccessTokens()
        #expect(try second.send(revoking.v1(accessToken: fresh, body: v1Body(["t"]))).code == "80200003")
    }

    @Test("an access token used for another app id is 401 80200001")
    func otherApp() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let token = try harness.accessToken(client)
        let response = try client.send(harness.v1(accessToken: token, body: v1Body(["t"]), app: "555"))
        #expect(response.status == 401 && response.code == "80200001")
    }
}
