import PushCore
import PushCredentials
import PushMockFCM
import PushMockSupport
import PushMockTesting
import PushTLS
import Testing

@Suite("Mock FCM: the OAuth2 token endpoint", .timeLimit(.minutes(1)))
struct TokenEndpointTests {
    @Test("a valid assertion gets a Bearer access token with the configured lifetime")
    func success() throws {
        let harness = try Harness { $0.accessTokenLifetime = 120 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(harness.tokenRequest(assertion: try harness.assertion()))
        #expect(response.status == 200)
        #expect(response.header("content-type") == "application/json; charset=UTF-8")
        let json = try #require(response.json)
        guard case .string(let token)? = json["access_token"] else {
            Issue.record("no access_token in \(response.text)")
            return
        }
        #expect(token.hasPrefix("ya29.") && token.count > 40)
        #expect(json["expires_in"] == .number("120"))
        #expect(json["token_type"] == .string("Bearer"))
        #expect(json.objectMembers?.count == 3)
        // A second exchange gets a different token.
        #expect(try harness.accessToken(client) != token)
        let stats = harness.server.stats
        #expect(stats.tokenRequests == 2)
        #expect(stats.tokensIssued == 2)
        #expect(stats.connectionsOpened == 1)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let error: String
        let description: String
        let request: @Sendable (Harness) throws -> H2Request
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "signed by another key", error: "invalid_grant", description: "Invalid JWT Signature.") {
            harness in
            let other = try RSASigner(scheme: .rs256, pem: RSAKeyPair.generate().privateKeyPEM)
            return harness.tokenRequest(assertion: try harness.assertion(signer: other))
        },
        Refusal(name: "wrong audience", error: "invalid_grant", description: "Invalid JWT: Failed audience check") {
            harness in
            harness.tokenRequest(assertion: try harness.assertion(audience: "https://oauth2.googleapis.com/token"))
        },
        Refusal(name: "wrong scope", error: "invalid_scope", description: "Invalid OAuth scope") { harness in
            harness.tokenRequest(
                assertion: try harness.assertion(scope: "https://www.googleapis.com/auth/userinfo.email"))
        },
        Refusal(name: "expired", error: "invalid_grant", description: "Invalid JWT: Token has expired") { harness in
            harness.tokenRequest(assertion: try harness.assertion(issuedAt: wallSeconds() - 3700))
        },
        Refusal(
            name: "issued in the future", error: "invalid_grant",
            description: "Invalid JWT: Token must be a short-lived"
        ) {
            harness in harness.tokenRequest(assertion: try harness.assertion(issuedAt: wallSeconds() + 600))
        },
        Refusal(name: "another issuer", error: "invalid_grant", description: "Invalid grant: account not found") {
            harness in
            let other = try GoogleServiceAccount(
                projectID: testProject, privateKeyID: "k", privateKey: testKey.privateKeyPEM,
                clientEmail: "someone@else.iam.gserviceaccount.com", tokenURI: harness.server.tokenURL)
            return harness.tokenRequest(assertion: try harness.assertion(account: other))
        },
        Refusal(name: "garbage assertion", error: "invalid_grant", description: "Invalid JWT: expected three") {
            harness in
            harness.tokenRequest(assertion: "not-a-jwt")
        },
        Refusal(name: "wrong grant type", error: "unsupported_grant_type", description: "Invalid grant_type: password")
        {
            harness in harness.tokenRequest(assertion: try harness.assertion(), grantType: "password")
        },
        Refusal(name: "no assertion", error: "invalid_request", description: "Missing required parameter: assertion") {
            _ in
            H2Request(
                path: "/token", headers: [("content-type", "application/x-www-form-urlencoded")],
                body: Array("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer".utf8))
        },
        Refusal(name: "JSON instead of a form", error: "invalid_request", description: "Content-Type must be") {
            harness in
            harness.tokenRequest(assertion: try harness.assertion(), contentType: "application/json")
        },
    ]

    @Test("refusals are 400 with Google's error and a precise description", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(try refusal.request(harness))
        #expect(response.status == 400)
        #expect(response.oauthError == refusal.error)
        #expect(response.oauthDescription?.hasPrefix(refusal.description) == true, "\(response.text)")
        #expect(response.json?.objectMembers?.count == 2, "only error and error_description")
        let stats = harness.server.stats
        #expect(stats.tokenRequests == 1)
        #expect(stats.tokensIssued == 0)
        #expect(stats.count(error: refusal.error) == 1)
    }

    @Test("a configured audience and the cloud-platform scope are accepted")
    func acceptedVariants() throws {
        let harness = try Harness { $0.extraAudiences = ["https://oauth2.googleapis.com/token"] }
        defer { harness.shutdown() }
        let client = try harness.client()
        let google = try client.send(
            harness.tokenRequest(assertion: try harness.assertion(audience: "https://oauth2.googleapis.com/token")))
        #expect(google.status == 200, "\(google.text)")
        let cloud = try client.send(
            harness.tokenRequest(
                assertion: try harness.assertion(scope: "https://www.googleapis.com/auth/cloud-platform")))
        #expect(cloud.status == 200, "\(cloud.text)")
        #expect(harness.server.stats.tokensIssued == 2)
    }

    @Test("the generated service account round-trips through its JSON and points at the mock")
    func generatedServiceAccount() throws {
        let (configuration, privateKeyPEM) = try MockFCMConfiguration.generated(projectID: "demo-42")
        let harness = try Harness { $0 = configuration }
        defer { harness.shutdown() }
        let account = try GoogleServiceAccount(
            json: harness.server.serviceAccount(privateKeyPEM: privateKeyPEM).serialized())
        #expect(account.projectID == "demo-42")
        #expect(account.tokenURI == "https://127.0.0.1:\(harness.server.localPort)/token")
        #expect(account.clientEmail == "pushgate-mock@demo-42.iam.gserviceaccount.com")
        let client = try harness.client()
        let assertion = try OAuthAssertion.make(
            account: account, audience: account.tokenURI, issuedAt: wallSeconds(), signer: account.signer())
        let token = try client.send(harness.tokenRequest(assertion: assertion))
        #expect(token.status == 200, "\(token.text)")
        guard case .string(let accessToken)? = token.json?["access_token"] else { return }
        let sent = try client.send(harness.sendRequest(accessToken: accessToken, project: "demo-42"))
        #expect(sent.status == 200, "\(sent.text)")
    }
}
