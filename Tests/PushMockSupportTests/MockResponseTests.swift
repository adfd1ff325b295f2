import PushCore
import PushHTTP2
import PushMockSupport
import Testing

@Suite("Mock responses")
struct MockResponseTests {
    @Test("a plain response has no headers, no body and counts as a success")
    func plain() {
        let response = MockResponse(status: 204)
        #expect(response.status == 204)
        #expect(response.headers.isEmpty)
        #expect(response.body.isEmpty)
        #expect(response.statsError == nil)
    }

    @Test("json: Google's content type by default, another when given, the body as is")
    func json() {
        let body = Array(#"{"name":"projects/p/messages/1"}"#.utf8)
        let google = MockResponse.json(200, body)
        #expect(google.status == 200)
        #expect(google.headers == [HTTP2Header("content-type", "application/json; charset=UTF-8")])
        #expect(google.body == body)
        #expect(google.statsError == nil)
        let amazon = MockResponse.json(400, body, statsError: "InvalidData", contentType: "application/json")
        #expect(amazon.headers == [HTTP2Header("content-type", "application/json")])
        #expect(amazon.statsError == "InvalidData")
    }

    @Test("oauth: the RFC 6749 error object, counted under its error code")
    func oauth() throws {
        let response = MockResponse.oauth(401, error: "invalid_client", #"Client "x" is unknown."#)
        #expect(response.status == 401)
        #expect(response.statsError == "invalid_client")
        #expect(response.headers == [HTTP2Header("content-type", MockResponse.googleJSON)])
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"error":"invalid_client","error_description":"Client \"x\" is unknown."}"#)
        #expect(try JSONParser.parse(response.body)["error_description"] == .string(#"Client "x" is unknown."#))
    }

    @Test("retryingAfter adds Retry-After after the other headers; nil leaves the response as it was")
    func retryAfter() {
        let response = MockResponse.json(503, [], statsError: "UNAVAILABLE")
        let retrying = response.retryingAfter(7)
        #expect(retrying.headers == response.headers + [HTTP2Header("retry-after", "7")])
        #expect(retrying.status == 503 && retrying.statsError == "UNAVAILABLE")
        let unchanged = response.retryingAfter(nil)
        #expect(unchanged.headers == response.headers)
        #expect(response.headers.count == 1, "the original is a value: not changed")
    }
}
