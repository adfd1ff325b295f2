import PushCore
import PushHTTP2
import PushMockSupport
import Testing

@Suite("Access-token table")
struct AccessTokenTableTests {
    private let second: UInt64 = 1_000_000_000

    /// A request carrying `authorization` (nil: none).
    private func request(authorization: String?) -> MockRequest {
        var request = MockRequest(connectionID: 1, streamID: 1)
        if let authorization { request.headers["authorization"] = authorization }
        return request
    }

    @Test("a token is the prefix and 32 random bytes in base64url, different every time")
    func shape() throws {
        let table = AccessTokenTable(prefix: "ya29.mock-")
        let tokens = try (0..<100).map { _ in try table.issue(lifetime: 60, now: 0) }
        for token in tokens {
            #expect(token.hasPrefix("ya29.mock-"))
            let random = token.dropFirst("ya29.mock-".count)
            #expect(random.count == 43, "32 bytes without padding")
            #expect(random.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        }
        #expect(Set(tokens).count == 100)
    }

    @Test("valid from issue until `lifetime` seconds later, not at that instant")
    func expiry() throws {
        let table = AccessTokenTable(prefix: "t-")
        let now: UInt64 = 5 * second
        let token = try table.issue(lifetime: 30, now: now)
        #expect(table.isValid(token[...], now: now))
        #expect(table.isValid(token[...], now: now + 30 * second - 1))
        #expect(!table.isValid(token[...], now: now + 30 * second))
        #expect(!table.isValid(token[...], now: now + 3600 * second))
    }

    @Test("a lifetime below one second counts as one", arguments: [0, -10])
    func shortLifetime(lifetime: Int) throws {
        let table = AccessTokenTable(prefix: "t-")
        let token = try table.issue(lifetime: lifetime, now: 0)
        #expect(table.isValid(token[...], now: second - 1))
        #expect(!table.isValid(token[...], now: second))
    }

    @Test("a token not issued here is not valid, nor one another table issued")
    func unknown() throws {
        let table = AccessTokenTable(prefix: "t-")
        let other = AccessTokenTable(prefix: "t-")
        let token = try other.issue(lifetime: 60, now: 0)
        #expect(!table.isValid(token[...], now: 0))
        #expect(!table.isValid("t-", now: 0))
        #expect(!table.isValid("", now: 0))
        #expect(other.isValid(token[...], now: 0))
    }

    @Test("revokeAll forgets every token")
    func revoke() throws {
        let table = AccessTokenTable(prefix: "t-")
        let tokens = try (0..<3).map { _ in try table.issue(lifetime: 60, now: 0) }
        table.revokeAll()
        #expect(tokens.allSatisfy { !table.isValid($0[...], now: 0) })
        let fresh = try table.issue(lifetime: 60, now: 0)
        #expect(table.isValid(fresh[...], now: 0), "the table keeps working")
    }

    @Test("the sweep of a grown table drops expired tokens only")
    func sweepKeepsValidTokens() throws {
        let table = AccessTokenTable(prefix: "t-")
        let expiring = try (0..<512).map { _ in try table.issue(lifetime: 1, now: 0) }
        let lasting = try (0..<512).map { _ in try table.issue(lifetime: 3600, now: 0) }
        // The 1025th issue finds 1024 tokens and sweeps those expired at its `now`.
        let late = try table.issue(lifetime: 60, now: 10 * second)
        #expect(lasting.allSatisfy { table.isValid($0[...], now: 10 * second) })
        #expect(expiring.allSatisfy { !table.isValid($0[...], now: 10 * second) })
        #expect(table.isValid(late[...], now: 10 * second))
    }

    @Test("authorizes: `Authorization: Bearer <token>` with a valid token, the scheme in any case")
    func authorizes() throws {
        let table = AccessTokenTable(prefix: "Atc|mock-")
        let token = try table.issue(lifetime: 60, now: 0)
        #expect(table.authorizes(request(authorization: "Bearer \(token)"), now: 0))
        #expect(table.authorizes(request(authorization: "bearer \(token)"), now: 0))
        #expect(table.authorizes(request(authorization: "BEARER \(token)"), now: 0))
        #expect(!table.authorizes(request(authorization: "Bearer \(token)"), now: 60 * second), "expired")
        #expect(!table.authorizes(request(authorization: "Basic \(token)"), now: 0))
        #expect(!table.authorizes(request(authorization: token), now: 0))
        #expect(!table.authorizes(request(authorization: "Bearer  \(token)"), now: 0), "two spaces")
        #expect(!table.authorizes(request(authorization: nil), now: 0))
    }

    @Test("grant answers 200 JSON with the new token, expires_in, scope when given, token_type")
    func grant() throws {
        let table = AccessTokenTable(prefix: "ya29.mock-")
        let response = table.grant(lifetime: 1800, now: 0, tokenType: "Bearer", scope: "messaging:push")
        #expect(response.status == 200)
        #expect(response.statsError == nil)
        #expect(response.headers == [HTTP2Header("content-type", MockResponse.googleJSON)])
        let json = try JSONParser.parse(response.body)
        guard case .string(let token)? = json["access_token"] else {
            Issue.record("no access_token in \(String(decoding: response.body, as: UTF8.self))")
            return
        }
        #expect(table.isValid(token[...], now: 1799 * second))
        #expect(!table.isValid(token[...], now: 1800 * second))
        #expect(json["expires_in"] == .number("1800"))
        #expect(json["scope"] == .string("messaging:push"))
        #expect(json["token_type"] == .string("Bearer"))
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.hasPrefix(#"{"access_token":"ya29.mock-"#))
        #expect(text.hasSuffix(#","expires_in":1800,"scope":"messaging:push","token_type":"Bearer"}"#))
    }

    @Test("grant without a scope leaves it out; a lifetime under a second is granted as 1")
    func grantWithoutScope() throws {
        let table = AccessTokenTable(prefix: "t-")
        let response = table.grant(lifetime: 0, now: 0, tokenType: "bearer")
        let json = try JSONParser.parse(response.body)
        #expect(json["scope"] == nil)
        #expect(json["expires_in"] == .number("1"))
        #expect(json["token_type"] == .string("bearer"))
    }
}
