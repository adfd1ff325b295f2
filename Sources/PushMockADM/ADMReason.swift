import PushCore
import PushMockSupport

/// A `reason` ADM answers a send with (`{"reason":"…"}`), paired with its HTTP status, as
/// Amazon's "Send a Message" page lists them (docs/providers.md D.3); the last few are this mock's own.
public enum ADMReason: String, Error, Sendable, CaseIterable {
    /// 400: the registration id is not one ADM issued (malformed, or for another app).
    case invalidRegistrationId = "InvalidRegistrationId"
    /// 400: the body is not JSON, or `data` is missing or not a map of strings.
    case invalidData = "InvalidData"
    /// 400: `consolidationKey` is not a string of at most 64 characters.
    case invalidConsolidationKey = "InvalidConsolidationKey"
    /// 400: `expiresAfter` is not an integer from 1 to 2592000 (30 days).
    case invalidExpiration = "InvalidExpiration"
    /// 400: `md5` is not the checksum of `data` (the mock checks only its shape).
    case invalidChecksum = "InvalidChecksum"
    /// 401: the access token is unknown, revoked or expired.
    case accessTokenExpired = "AccessTokenExpired"
    /// 410: the app instance is gone (uninstalled, or the id was replaced long ago).
    case unregistered = "Unregistered"
    /// 413: the body is over 6 KB.
    case messageTooLarge = "MessageTooLarge"
    /// 429: too many messages for this id or app; `Retry-After` says when to try again.
    case maxRateExceeded = "MaxRateExceeded"
    /// 500 and 503: ADM had a problem; try again later (503 with `Retry-After`).
    case internalServerError = "InternalServerError"
    case serviceUnavailable = "ServiceUnavailable"
    /// Mock only, 400: `X-Amzn-Type-Version` is missing or not `…ADMMessage@1.0`.
    case invalidTypeVersion = "InvalidTypeVersion"
    /// Mock only, 400: `X-Amzn-Accept-Type` is missing or not `…ADMSendResult@1.0`.
    case invalidAcceptType = "InvalidAcceptType"
    /// Mock only, 404: no such path.
    case notFound = "NotFound"

    public var httpStatus: Int {
        switch self {
        case .invalidRegistrationId, .invalidData, .invalidConsolidationKey, .invalidExpiration, .invalidChecksum,
            .invalidTypeVersion, .invalidAcceptType:
            400
        case .accessTokenExpired: 401
        case .notFound: 404
        case .unregistered: 410
        case .messageTooLarge: 413
        case .maxRateExceeded: 429
        case .internalServerError: 500
        case .serviceUnavailable: 503
        }
    }

    /// Whether the answer carries `Retry-After` (when the mock sends one).
    public var isRetryable: Bool { self == .maxRateExceeded || self == .serviceUnavailable }

    /// `{"reason":"<reason>"}`.
    public var body: [UInt8] {
        var writer = JSONWriter(reservingCapacity: 48)
        writer.beginObject()
        writer.key("reason")
        writer.string(rawValue)
        writer.endObject()
        return writer.bytes
    }
}

extension MockResponse {
    /// ADM's JSON content type (`application/json`, without a charset).
    static let admJSON = "application/json"

    /// An ADM error answer, with `Retry-After` when the reason is a retryable one and the mock
    /// sends it.
    static func adm(_ reason: ADMReason, retryAfter: Int?) -> Self {
        json(reason.httpStatus, reason.body, statsError: reason.rawValue, contentType: admJSON)
            .retryingAfter(reason.isRetryable ? retryAfter : nil)
    }
}
