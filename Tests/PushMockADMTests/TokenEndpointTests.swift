import PushCore
import PushMockADM
import PushMockSupport
import PushMockTesting
import Testing

@Suite("Mock ADM: the Login-with-Amazon token endpoint", .timeLimit(.minutes(1)))
struct TokenEndpointTests {
    @Test("the configured client credentials get a bearer token for messaging:push with the configured lifetime")
    func success() throws {
        let harness = try Harness { $0.accessTokenLifetime = 120 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(harness.tokenRequest())
        #expect(response.status == 200, "\(response.text)")
        #expect(response.header("content-type") == "application/json")
        let json = try #require(response.json)
        guard case .string(let token)? = json["access_token"] else {
            Issue.record("no access_token in \(response.text)")
            return
        }
        #expect(token.hasPrefix("Atc|") && token.count > 40)
        #expect(json.objectMembers?.map(\.0) == ["access_token", "expires_in", "scope", "token_type"])
        #expect(json["expires_in"] == .number("120"))
        #expect(json["scope"] == .string("messaging:push"))
        #expect(json["token_type"] == .string("bearer"))
        #expect(try harness.accessToken(client) != token, "each exchange gets a new token")
        let stats = harness.server.stats
        #expect(stats.tokenRequests == 2)
        #expect(stats.tokensIssued == 2)
        #expect(stats.count(status: 200) == 2)
    }

    @Test("the lifetime defaults to 3600 s, and the path's case does not matter (Amazon's page writes /auth/O2/token)")
    func defaultsAndPathCase() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(harness.tokenRequest(path: "/auth/O2/token"))
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json?["expires_in"] == .number("3600"))
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let status: Int
        let error: String
        let description: String
        let request: @Sendable (Harness) -> H2Request
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "wrong secret", status: 401, error: "invalid_client", description: "Client authentication failed")
        {
            $0.tokenRequest(clientSecret: "guess")
        },
        Refusal(
            name: "unknown client id", status: 401, error: "invalid_client", description: "Client authentication failed"
        ) {
            $0.tokenRequest(clientID: "amzn1.application-oa2-client.other")
        },
        Refusal(
            name: "no client_secret", status: 400, error: "invalid_request",
            description: "Missing required parameter: client_secret"
        ) {
            $0.tokenRequest(clientSecret: nil)
        },
        Refusal(
            name: "no client_id", status: 400, error: "invalid_request",
            description: "Missing required parameter: client_id"
        ) {
            $0.tokenRequest(clientID: nil)
        },
        Refusal(
            name: "another scope", status: 400, error: "invalid_scope",
            description: "An unknown scope was requested: profile"
        ) {
            $0.tokenRequest(scope: "profile")
        },
        Refusal(
            name: "no scope", status: 400, error: "invalid_request", description: "Missing required parameter: scope"
        ) {
            $0.tokenRequest(scope: nil)
        },
        Refusal(
            name: "another grant type", status: 400, error: "unsupported_grant_type",
            description: "Invalid grant_type: password"
        ) {
            $0.tokenRequest(grantType: "password")
        },
        Refusal(
            name: "JSON instead of a form", status: 400, error: "invalid_request", description: "Content-Type must be"
        ) {
            $0.tokenRequest(contentType: "application/json")
        },
        Refusal(name: "GET", status: 405, error: "invalid_request", description: "The token endpoint only accepts POST")
        {
            var request = $0.tokenRequest()
            request.method = "GET"
            request.body = []
            return request
        },
    ]

    @Test("refusals carry an OAuth2 error and a precise description, and issue nothing", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(refusal.request(harness))
        #expect(response.status == refusal.status, "\(response.text)")
        #expect(response.oauthError == refusal.error)
        #expect(response.oauthDescription?.hasPrefix(refusal.description) == true, "\(response.text)")
        #expect(response.json?.objectMembers?.count == 2, "only error and error_description")
        #expect(response.header("content-type") == "application/json")
        let stats = harness.server.stats
        #expect(stats.tokenRequests == 1)
        #expect(stats.tokensIssued == 0)
        #expect(stats.count(error: refusal.error) == 1)
    }

    @Test("generated credentials look like Amazon's and round-trip through their JSON file form")
    func generatedCredentials() throws {
        let configuration = try MockADMConfiguration.generated()
        let credentials = configuration.credentials
        #expect(credentials.clientID.hasPrefix("amzn1.application-oa2-client.") && credentials.clientID.count == 61)
        #expect(credentials.clientSecret.count == 64 && credentials.clientSecret.allSatisfy(\.isHexDigit))
        #expect(MockADMCredentials(json: credentials.json) == credentials)
        #expect(
            String(decoding: MockADMCredentials(clientID: "a\"b", clientSecret: "s").json, as: UTF8.self)
                == #"{"client_id":"a\"b","client_secret":"s"}"#)
        #expect(MockADMCredentials(json: Array(#"{"client_id":"x"}"#.utf8)) == nil)
        #expect(try MockADMConfiguration.generated(clientID: "mine").credentials.clientID == "mine")
        #expect(try MockADMConfiguration.generated().credentials != credentials)

        let harness = try Harness { $0.credentials = configuration.credentials }
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(
            harness.tokenRequest(clientID: credentials.clientID, clientSecret: credentials.clientSecret))
        #expect(response.status == 200, "\(response.text)")
        #expect(try client.send(harness.tokenRequest()).status == 401, "the fixed test credentials are not these")
    }
}
