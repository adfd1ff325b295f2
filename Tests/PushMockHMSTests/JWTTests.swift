import PushCore
import PushCredentials
import PushMockHMS
import PushMockSupport
import PushMockTesting
import PushTLS
import Testing

@Suite("Mock HMS: v3 service-account JWTs", .timeLimit(.minutes(1)))
struct JWTTests {
    @Test("a PS256 JWT of the account is accepted, and reused for several sends")
    func accepted() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try makeJWT()
        let responses = try client.send((0..<3).map { harness.v3(jwt: jwt, body: v3Body(["token-\($0)"])) })
        for response in responses {
            #expect(response.status == 200, "\(response.text)")
            #expect(response.code == "80000000")
            #expect(response.msg == "Success")
            let requestID = try #require(response.jsonString("requestId"))
            #expect(requestID.count == 24 && requestID.allSatisfy(\.isNumber), "\(requestID)")
        }
        #expect(Set(responses.compactMap { $0.jsonString("requestId") }).count == 3)
        let stats = harness.server.stats
        #expect(stats.v3Sends == 3 && stats.accepted == 3 && stats.tokensDelivered == 3)
        #expect(stats.recentMessages.allSatisfy { $0.api == "v3" && $0.pushType == 0 })
    }

    @Test(
        "refused JWTs: 401 80200001 when missing, not PS256, wrongly signed or claimed, or issued ahead",
        arguments: [
            "missing", "garbage", "RS256 alg", "other kid", "other iss", "other aud", "other key", "tampered",
            "iat ahead",
        ])
    func refused(_ scenario: String) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt: String?
        switch scenario {
        case "missing": jwt = nil
        case "garbage": jwt = "not.a.jwt"
        case "RS256 alg": jwt = try makeJWT(alg: "RS256")
        case "other kid": jwt = try makeJWT(kid: "0123")
        case "other iss": jwt = try makeJWT(iss: "999")
        case "other aud": jwt = try makeJWT(aud: "https://oauth-login.cloud.huawei.com/oauth2/v2/token")
        case "other key":
            jwt = try makeJWT(signer: try HuaweiServiceAccount.generated().signer())
        case "tampered":
            let good = try makeJWT()
            let parts = good.split(separator: ".")
            let claims = #"{"iss":"\#(testAccount.subAccount)","aud":"x","iat":1,"exp":9999999999}"#
            jwt = parts[0] + "." + base64URLEncode(Array(claims.utf8)) + "." + parts[2]
        default: jwt = try makeJWT(iat: unixNow() + 600)
        }
        let response = try client.send(harness.v3(jwt: jwt, body: v3Body(["t"])))
        #expect(response.status == 401, "\(scenario): \(response.text)")
        #expect(response.code == "80200001", "\(scenario)")
        #expect(response.msg == "Authentication Error.")
        #expect(harness.server.stats.accepted == 0)
    }

    @Test("an expired JWT is 401 80200005; one living over the bound is 401 80300036")
    func expiredAndTooLong() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let expired = try client.send(
            harness.v3(jwt: try makeJWT(iat: unixNow() - 3700, lifetime: 3600), body: v3Body(["t"])))
        #expect(expired.status == 401)
        #expect(expired.code == "80200005")
        #expect(expired.msg == "Jwt token expired.")
        let long = try client.send(harness.v3(jwt: try makeJWT(lifetime: 7200), body: v3Body(["t"])))
        #expect(long.status == 401)
        #expect(long.code == "80300036")
        // 3600 plus the minute's slack is still fine.
        #expect(try client.send(harness.v3(jwt: try makeJWT(lifetime: 3660), body: v3Body(["t"]))).code == "80000000")
        #expect(harness.server.stats.count(error: "80200005") == 1)
    }

    @Test("the path's project must be the account's (401 80200001)")
    func project() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(harness.v3(jwt: try makeJWT(), body: v3Body(["t"]), project: "1234"))
        #expect(response.status == 401 && response.code == "80200001")
    }

    @Test("the generated service account is Huawei's console format; the gateway's own JWTs are accepted")
    func serviceAccountFile() throws {
        let account = try HuaweiServiceAccount.generated()
        let json = try #require(try? JSONParser.parse(account.serialized()))
        #expect(
            json.objectMembers?.map(\.0) == [
                "project_id", "key_id", "private_key", "sub_account", "auth_uri", "token_uri", "auth_provider_cert_uri",
                "client_cert_uri",
            ])
        #expect(account.privateKey.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(account.projectID.count == 18 && account.projectID.allSatisfy(\.isNumber))
        #expect(account.subAccount.count == 10 && account.keyID.count == 32)
        #expect(json["token_uri"] == .string("https://oauth-login.cloud.huawei.com/oauth2/v3/token"))
        #expect(try HuaweiServiceAccount(json: account.serialized()) == account)

        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let jwt = try HuaweiJWT.make(account: testAccount, issuedAt: unixNow(), signer: testSigner)
        let response = try client.send(harness.v3(jwt: jwt, body: v3Body(["t"])))
        #expect(response.code == "80000000", "\(response.text)")
    }
}
