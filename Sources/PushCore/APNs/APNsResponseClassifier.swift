/// Decides what an APNs answer means for its request (docs/providers.md A.6): the body's `reason`
/// read through ``APNsReason`` (with `timestamp` for a 410), else the HTTP status.
///
/// | Reason (else HTTP status)                                   | Outcome                                       |
/// |-------------------------------------------------------------|-----------------------------------------------|
/// | HTTP 2xx (200; the channel API's 201 and 204)               | delivered (the id is the `apns-id` or `apns-channel-id` header, read by the dialect) |
/// | `BadDeviceToken`, `DeviceTokenNotForTopic`, `ExpiredToken`, `Unregistered` | rejected, invalidates the token |
/// | `InvalidProviderToken`, `BadCertificate`, `BadCertificateEnvironment`, `BadEnvironmentKeyIdInToken`, `BadEnvironmentKeyInToken`, `UnrelatedKeyIdInToken` | rejected: the app's credentials (``DeliveryCode/credentialsRefused``) |
/// | the other reasons APNs documents as permanent               | rejected                                      |
/// | `ExpiredProviderToken`                                      | unauthenticated: renew the provider token     |
/// | `TooManyRequests`, `InternalServerError`, `ServiceUnavailable`, `TooManyProviderTokenUpdates` | transient |
/// | `Shutdown`, `IdleTimeout`                                   | connectionClosing: send on a new connection   |
/// | an unknown reason, or none: HTTP 429, 500, 502, 503, 504    | transient                                     |
/// | other HTTP statuses                                         | rejected                                      |
///
/// A rejection with 410 carries the body's `timestamp` as `unregisteredAt`. APNs sends no
/// `Retry-After`: transient answers wait out the engine's backoff. `TooManyProviderTokenUpdates`
/// keeps the cached provider token (minting more makes it worse). Reasons are APNs' strings
/// verbatim, else `HTTP <status>`.
public enum APNsResponseClassifier {
    /// The outcome of one response: its HTTP `:status` and body.
    public static func outcome(status: Int, body: [UInt8]) -> ClassifiedAnswer {
        if (200..<300).contains(status) { return .delivered(id: "") }
        var reasonText = ""
        var timestamp: Int64 = 0
        if let json = try? JSONParser.parse(body), case .object(let members) = json {
            for (key, value) in members {
                if key == "reason", case .string(let text) = value { reasonText = text }
                if key == "timestamp", case .number(let text) = value { timestamp = Int64(text) ?? 0 }
            }
        }
        guard !reasonText.isEmpty else {
            // No usable body (a proxy's answer, or a truncated one): the HTTP status decides.
            let reason = "HTTP \(status)"
            return APNsReason.Retry(httpStatus: status) == .never
                ? .rejected(reason: reason, httpStatus: status, invalidatesToken: false, code: .rejectedByProvider)
                : .transient(reason: reason, httpStatus: status, retryAfter: nil)
        }
        let reason = APNsReason(reasonText)
        let retry: APNsReason.Retry
        if case .other = reason { retry = APNsReason.Retry(httpStatus: status) } else { retry = reason.retry }
        switch retry {
        case .never:
            return .rejected(
                reason: reasonText, httpStatus: status, invalidatesToken: reason.invalidatesToken,
                unregisteredAt: status == 410 ? timestamp : 0,
                code: reason.refusesCredentials ? .credentialsRefused : .rejectedByProvider)
        case .afterProviderTokenHandling where reason == .expiredProviderToken:
            return .unauthenticated(reason: reasonText, httpStatus: status)
        case .onNewConnection:
            return .connectionClosing(reason: reasonText, httpStatus: status)
        case .afterBackoff, .afterProviderTokenHandling:
            return .transient(reason: reasonText, httpStatus: status, retryAfter: nil)
        }
    }
}
