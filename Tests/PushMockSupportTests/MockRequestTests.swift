import PushCore
import PushMockSupport
import Testing

@Suite("Mock requests")
struct MockRequestTests {
    private func request(
        method: String = "POST", contentType: String? = "application/x-www-form-urlencoded", body: String = "",
        bodyLength: Int? = nil
    ) -> MockRequest {
        var request = MockRequest(connectionID: 3, streamID: 7)
        request.method = method
        if let contentType { request.headers["content-type"] = contentType }
        request.body = Array(body.utf8)
        request.bodyLength = bodyLength ?? request.body.count
        return request
    }

    /// The OAuth2 error a refused form answers: status, `error` and the statistics key.
    private func refusal(_ result: Result<[(name: String, value: String)], MockResponse>) throws -> (Int, String) {
        guard case .failure(let response) = result else {
            Issue.record("the form was accepted")
            return (0, "")
        }
        guard case .string(let error)? = try JSONParser.parse(response.body)["error"] else {
            Issue.record("no error member")
            return (response.status, "")
        }
        #expect(response.statsError == error)
        return (response.status, error)
    }

    @Test("a new request is empty but for where it came from")
    func defaults() {
        let request = MockRequest(connectionID: 3, streamID: 7)
        #expect(request.connectionID == 3)
        #expect(request.streamID == 7)
        #expect(request.method.isEmpty && request.path.isEmpty && request.authority.isEmpty)
        #expect(request.headers.isEmpty && request.body.isEmpty && request.bodyLength == 0)
        #expect(request.contentType == "")
        #expect(request.authorization == nil)
        #expect(request.bearerToken == nil)
    }

    @Test(
        "the route is the path without its query",
        arguments: [
            ("/v1/projects/p/messages:send", "/v1/projects/p/messages:send"),
            ("/token?x=1&y=2", "/token"), ("/?", "/"), ("?only", ""), ("", ""),
        ])
    func route(path: String, route: String) {
        var request = MockRequest(connectionID: 1, streamID: 1)
        request.path = path
        #expect(request.route == route[...])
    }

    @Test(
        "the bearer token: after `Bearer ` in any case; nil for other schemes or an empty token",
        arguments: [
            ("Bearer abc", "abc"), ("bearer abc", "abc"), ("BeArEr a b", "a b"), ("Bearer  x", " x"),
            ("Bearer ", nil), ("Bearer", nil), ("Basic abc", nil), ("Bearerabc", nil), ("", nil),
        ] as [(String, String?)])
    func bearerToken(authorization: String, token: String?) {
        var request = MockRequest(connectionID: 1, streamID: 1)
        request.headers["authorization"] = authorization
        #expect(request.authorization == authorization)
        #expect(request.bearerToken.map(String.init) == token)
    }

    @Test("an OAuth2 form whose grant_type matches is its pairs, in order")
    func oauthFormAccepted() throws {
        let form = try request(
            contentType: "Application/X-WWW-Form-URLEncoded;charset=UTF-8",
            body: "grant_type=client_credentials&scope=messaging%3Apush&client_id=a+b"
        ).oauthForm(grantType: "client_credentials", maxBodyBytes: 1024).get()
        #expect(form.map(\.name) == ["grant_type", "scope", "client_id"])
        #expect(form.map(\.value) == ["client_credentials", "messaging:push", "a b"])
    }

    @Test("another method is 405 invalid_request")
    func oauthFormMethod() throws {
        let (status, error) = try refusal(
            request(method: "GET", body: "grant_type=x").oauthForm(grantType: "x", maxBodyBytes: 1024))
        #expect(status == 405)
        #expect(error == "invalid_request")
    }

    @Test("another content type, or none, is 400 invalid_request", arguments: ["application/json", nil])
    func oauthFormContentType(contentType: String?) throws {
        let (status, error) = try refusal(
            request(contentType: contentType, body: "grant_type=x").oauthForm(grantType: "x", maxBodyBytes: 1024))
        #expect(status == 400)
        #expect(error == "invalid_request")
    }

    @Test(
        "a body over the limit, not a form, or without grant_type is 400 invalid_request",
        arguments: [("grant_type=x", 2000), ("grant_type=%zz", nil), ("scope=a&assertion=b", nil), ("", nil)]
            as [(String, Int?)])
    func oauthFormBody(body: String, bodyLength: Int?) throws {
        let (status, error) = try refusal(
            request(body: body, bodyLength: bodyLength).oauthForm(grantType: "x", maxBodyBytes: 1024))
        #expect(status == 400)
        #expect(error == "invalid_request")
    }

    @Test("another grant is 400 unsupported_grant_type naming it")
    func oauthFormGrant() throws {
        let result = request(body: "grant_type=password").oauthForm(grantType: "client_credentials", maxBodyBytes: 64)
        let (status, error) = try refusal(result)
        #expect(status == 400)
        #expect(error == "unsupported_grant_type")
        if case .failure(let response) = result {
            #expect(try JSONParser.parse(response.body)["error_description"] == .string("Invalid grant_type: password"))
        }
    }

    @Test("equalsIgnoringASCIICase folds A-Z only, and compares lengths")
    func caseInsensitive() {
        #expect(equalsIgnoringASCIICase("Content-Type".utf8, "content-type".utf8))
        #expect(equalsIgnoringASCIICase("".utf8, "".utf8))
        #expect(!equalsIgnoringASCIICase("abc".utf8, "abcd".utf8))
        #expect(!equalsIgnoringASCIICase("abc".utf8, "abd".utf8))
        // `[` is 0x5B and `{` 0x7B: one bit apart, like a letter's cases, but not letters.
        #expect(!equalsIgnoringASCIICase("[".utf8, "{".utf8))
        #expect(!equalsIgnoringASCIICase("@".utf8, "`".utf8))
        #expect(!equalsIgnoringASCIICase("é".utf8, "É".utf8), "non-ASCII bytes are compared as they are")
    }
}
