import PushCore
package import PushHTTP2

/// A mock server's answer: status, headers (after `:status`), body; `statsError` is what the
/// statistics count it under (an error code or reason), nil for a success.
/// `Error` so that a refusal can travel in a `Result` (``MockRequest/oauthForm(grantType:maxBodyBytes:)``).
package struct MockResponse: Error, Sendable {
    package var status: Int
    package var headers: [HTTP2Header] = []
    package var body: [UInt8] = []
    package var statsError: String?

    package init(status: Int, headers: [HTTP2Header] = [], body: [UInt8] = [], statsError: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.statsError = statsError
    }

    /// Google's content type; ``json(_:_:statsError:contentType:)``'s default.
    package static let googleJSON = "application/json; charset=UTF-8"

    package static func json(
        _ status: Int, _ body: [UInt8], statsError: String? = nil, contentType: String = googleJSON
    ) -> Self {
        MockResponse(
            status: status, headers: [HTTP2Header("content-type", contentType)], body: body, statsError: statsError)
    }

    /// An OAuth2 token-endpoint error (RFC 6749 §5.2), as Google's and Amazon's servers write it:
    /// `{"error":"…","error_description":"…"}`.
    package static func oauth(_ status: Int, error: String, _ description: String) -> Self {
        var writer = JSONWriter(reservingCapacity: 128)
        writer.beginObject()
        writer.key("error")
        writer.string(error)
        writer.key("error_description")
        writer.string(description)
        writer.endObject()
        return json(status, writer.bytes, statsError: error)
    }

    /// Adds `Retry-After: seconds` when `seconds` is set.
    package func retryingAfter(_ seconds: Int?) -> Self {
        guard let seconds else { return self }
        var response = self
        response.headers.append(HTTP2Header("retry-after", String(seconds)))
        return response
    }
}
