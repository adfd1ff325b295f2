import PushCore
import PushHTTP2
import PushMockSupport

/// A Push Kit business code as the mock answers it (`{"code":"…","msg":"…","requestId":"…"}`),
/// with the HTTP status the mock pairs it with. Huawei documents the codes and the statuses in two
/// separate tables (docs/notes/hms-push-kit.md 1.5, 2.3); which status comes with which code is
/// unverified, and these pairs are the notes' inference: 200 for success and partial success, 400
/// for parameter and token errors, 401 for authentication, 500 for an inner error.
public enum HMSCode: String, Sendable, CaseIterable {
    /// 200: accepted.
    case success = "80000000"
    /// 200: some tokens failed; `msg` is a JSON text naming them.
    case partialSuccess = "80100000"
    /// 400: a parameter is missing or wrong (`push-type`, `validate_only`, `message.data`, …).
    case parameterError = "80100001"
    /// 400: the payload's structure is wrong.
    case illegalPayload = "80100003"
    /// 401: missing or bad JWT / access token, wrong project or app id in the path.
    case authenticationError = "80200001"
    /// 401: v1 access token expired.
    case accessTokenExpired = "80200003"
    /// 401: v3 JWT expired.
    case jwtExpired = "80200005"
    /// 400 (by default; ``MockHMSConfiguration/allInvalidStatus``): every token is invalid.
    case allTokensInvalid = "80300007"
    /// 400: the body is over 4096 bytes, tokens not counted.
    case messageTooLong = "80300008"
    /// 400: not 1 to 1000 tokens (or no `message` / `target.token` where they belong).
    case tokenCount = "80300010"
    /// 400: a test message (`pushOptions.testMessage`) to more than 10 tokens.
    case testMessageTokenCount = "80300030"
    /// 401: the JWT's lifetime (`exp` − `iat`) is over the mock's bound.
    case jwtLifetime = "80300036"
    /// 500: Huawei's "Inner Error." (`--fail-500`).
    case innerError = "81000001"

    /// The HTTP status the mock answers this code with.
    public var httpStatus: Int {
        switch self {
        case .success, .partialSuccess: 200
        case .parameterError, .illegalPayload, .allTokensInvalid, .messageTooLong, .tokenCount,
            .testMessageTokenCount:
            400
        case .authenticationError, .accessTokenExpired, .jwtExpired, .jwtLifetime: 401
        case .innerError: 500
        }
    }

    /// Huawei's message for the code (H-resp, the v1 code tables; `80200003`'s as seen from the v1 API).
    public var message: String {
        switch self {
        case .success: "Success"
        case .partialSuccess: "Check Parameter Partial Success."
        case .parameterError: "Check Parameter Error."
        case .illegalPayload: "Illegal payload"
        case .authenticationError: "Authentication Error."
        case .accessTokenExpired: "Access token expired"
        case .jwtExpired: "Jwt token expired."
        case .allTokensInvalid: "All the tokens are invalid"
        case .messageTooLong: "Push message size is too long."
        case .tokenCount: "token count should within 1 and 1000."
        case .testMessageTokenCount: "When send test message, token count exceed limit."
        case .jwtLifetime: "JWT expire period over threshold."
        case .innerError: "Inner Error."
        }
    }
}

extension MockResponse {
    /// Push Kit's JSON content type.
    static let hmsJSON = "application/json;charset=UTF-8"

    /// `{"code":"<code>","msg":"<msg>","requestId":"<id>"}` with `status` (the code's own by default).
    static func hms(_ code: HMSCode, msg: String? = nil, requestID: String, status: Int? = nil) -> Self {
        var writer = JSONWriter(reservingCapacity: 96 + (msg?.utf8.count ?? 32))
        writer.beginObject()
        writer.key("code")
        writer.string(code.rawValue)
        writer.key("msg")
        writer.string(msg ?? code.message)
        writer.key("requestId")
        writer.string(requestID)
        writer.endObject()
        return json(
            status ?? code.httpStatus, writer.bytes, statsError: code == .success ? nil : code.rawValue,
            contentType: hmsJSON)
    }

    /// An OAuth error of Huawei's token endpoint: `{"error":1101,"sub_error":N,"error_description":"…"}`.
    static func huaweiOAuth(_ status: Int, subError: Int, _ description: String) -> Self {
        var writer = JSONWriter(reservingCapacity: 96 + description.utf8.count)
        writer.beginObject()
        writer.key("error")
        writer.int(1101)
        writer.key("sub_error")
        writer.int(subError)
        writer.key("error_description")
        writer.string(description)
        writer.endObject()
        return json(status, writer.bytes, statsError: "oauth-\(subError)", contentType: hmsJSON)
    }

    /// A status with no body (flow control: Huawei documents 503, not a body), or a small JSON
    /// body for a path the mock does not serve.
    static func hmsBare(_ status: Int, statsError: String) -> Self {
        MockResponse(status: status, statsError: statsError)
    }
}
