/// What is wrong with a push's VAPID `Authorization` (RFC 8292). Every one is answered 401,
/// errno 109, as autopush answers its `VapidError`s and JWT errors; the raw value is the key the
/// statistics count it under, the message autopush's wording where it has one.
enum VAPIDFailure: String, Error, Sendable {
    /// No `Authorization` header (a `/wpush/v2/` endpoint requires VAPID).
    case missing = "VapidMissing"
    /// Not the `vapid` scheme (autopush also takes the older `WebPush` + `Crypto-Key` form).
    case unknownScheme = "VapidUnknownScheme"
    case missingToken = "VapidMissingToken"
    case missingKey = "VapidMissingKey"
    /// `k` is not base64url of a 65-byte point on P-256.
    case invalidKey = "VapidInvalidKey"
    /// `t` is not a compact JWS with header `alg` ES256 (`typ`, when present, JWT) and claims
    /// with an integer `exp` and a string `aud`.
    case invalidToken = "VapidInvalidToken"
    /// The ES256 signature does not verify with `k`.
    case badSignature = "VapidBadSignature"
    /// `aud` is not the origin of the endpoint as the request addressed it.
    case invalidAudience = "VapidInvalidAudience"
    /// `exp` is not in the future.
    case expired = "VapidExpired"
    /// `exp` is more than 24 hours ahead.
    case expiryTooFar = "VapidExpiryTooFar"
    /// `sub` is missing, or neither a `mailto:` nor an `https:` URL (autopush only logs this).
    case badSubject = "VapidBadSubject"

    var message: String {
        switch self {
        case .missing: "Missing VAPID public key (an Authorization: vapid t=…, k=… header)"
        case .unknownScheme: "Unknown auth scheme (expected vapid t=…, k=…)"
        case .missingToken: "Missing VAPID token"
        case .missingKey: "Missing VAPID public key"
        case .invalidKey: "Invalid VAPID public key: k must be base64url of a 65-byte uncompressed P-256 point"
        case .invalidToken:
            "Invalid VAPID token: expected a JWT with header alg ES256 and claims with an integer exp and a string aud"
        case .badSignature: "InvalidSignature: the VAPID token's ES256 signature does not verify with k"
        case .invalidAudience: "Invalid VAPID audience"
        case .expired: "ExpiredSignature: the VAPID token's exp is not in the future"
        case .expiryTooFar: "The VAPID token expiration is too long (at most 24 hours ahead)"
        case .badSubject: "Improperly formatted sub string (a mailto: or https: URL is required by this mock)"
        }
    }

    var refusal: WebPushRefusal { WebPushRefusal(.vapid, message, statsKey: rawValue) }
}
