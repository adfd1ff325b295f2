import PushCore
import PushHTTP2
import PushMockSupport

/// An error answer of the mock push service, in autopush's shape (autoendpoint's `ApiError`):
/// `{"code":<status>,"errno":<n or null>,"error":"<reason phrase>","message":"…","more_info":"…"}`.
/// `reason` is what the statistics count it under (`by_error`).
struct WebPushRefusal: Error, Sendable {
    enum Reason: String, Sendable {
        /// 404, errno 102: no such endpoint (autopush: a token it cannot decrypt).
        case invalidToken = "InvalidToken"
        /// 410, errno 106: the subscription is gone.
        case noSubscription = "NoSubscription"
        /// 401, errno 109: the VAPID `Authorization` is missing or wrong.
        case vapid = "VapidError"
        /// 413, errno 104: the body is over 4096 bytes.
        case payloadTooLarge = "PayloadTooLarge"
        /// 400, errno 111: no `TTL`, or one that is not an integer.
        case noTTL = "NoTTL"
        /// 400, errno 114: a negative `TTL`.
        case invalidTTL = "InvalidTTL"
        /// 400, errno 113: `Topic` over 32 characters, or outside the base64url alphabet.
        case invalidTopic = "InvalidTopic"
        /// 400, errno 110: no or another `Content-Encoding` than `aes128gcm` on a body.
        case invalidEncryption = "InvalidEncryption"
        /// Mock only, 400: `Urgency` is not very-low, low, normal or high (RFC 8030 §5.3).
        case invalidUrgency = "InvalidUrgency"
        /// Mock only, 400 (errno 110): the body does not decrypt with the subscription's keys. A
        /// real push service cannot check this: it never holds the browser's private key.
        case decryptionFailed = "DecryptionFailed"
        /// Injected faults: 429 (mock only; no errno), 500 and 503.
        case rateLimited = "TooManyRequests"
        case internalError = "InternalServerError"
        case unavailable = "ServiceUnavailable"
        /// Mock only: another method than POST (405), a bad `/_mock/subscriptions` request (400).
        case methodNotAllowed = "MethodNotAllowed"
        case badRequest = "BadRequest"

        var status: Int {
            switch self {
            case .invalidToken: 404
            case .noSubscription: 410
            case .vapid: 401
            case .payloadTooLarge: 413
            case .noTTL, .invalidTTL, .invalidTopic, .invalidEncryption, .invalidUrgency, .decryptionFailed,
                .badRequest:
                400
            case .rateLimited: 429
            case .internalError: 500
            case .unavailable: 503
            case .methodNotAllowed: 405
            }
        }

        /// autopush's `errno` (its "error codes" page), nil where it has none.
        var errno: Int? {
            switch self {
            case .invalidToken: 102
            case .payloadTooLarge: 104
            case .noSubscription: 106
            case .vapid: 109
            case .invalidEncryption, .decryptionFailed: 110
            case .noTTL: 111
            case .invalidTopic: 113
            case .invalidTTL: 114
            case .invalidUrgency, .rateLimited, .internalError, .unavailable, .methodNotAllowed, .badRequest: nil
            }
        }
    }

    let reason: Reason
    let message: String
    /// What the statistics count it under: the reason, or for VAPID the finer ``VAPIDFailure``.
    let statsKey: String

    init(_ reason: Reason, _ message: String, statsKey: String? = nil) {
        self.reason = reason
        self.message = message
        self.statsKey = statsKey ?? reason.rawValue
    }

    static let moreInfo = "http://autopush.readthedocs.io/en/latest/http.html#error-codes"

    var body: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 192)
        writer.beginObject()
        writer.key("code")
        writer.int(reason.status)
        writer.key("errno")
        if let errno = reason.errno { writer.int(errno) } else { writer.null() }
        writer.key("error")
        writer.string(Self.reasonPhrase(reason.status))
        writer.key("message")
        writer.string(message)
        writer.key("more_info")
        writer.string(Self.moreInfo)
        writer.endObject()
        return writer.bytes
    }

    /// The answer, with `Retry-After` on 429 and 503 when the mock sends one, and autopush's
    /// `Cache-Control: max-age=86400` on 410.
    func response(retryAfter: Int?) -> MockResponse {
        var response = MockResponse.json(reason.status, body, statsError: statsKey, contentType: "application/json")
        switch reason {
        case .rateLimited, .unavailable: response = response.retryingAfter(retryAfter)
        case .noSubscription: response.headers.append(HTTP2Header("cache-control", "max-age=86400"))
        default: break
        }
        return response
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 410: "Gone"
        case 413: "Payload Too Large"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Error"
        }
    }
}
