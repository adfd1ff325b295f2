/// Decides what an FCM HTTP v1 response means for its request (docs/providers.md B.3).
///
/// FCM's `details[].errorCode` decides first, then the canonical `status`, then the HTTP status:
///
/// | Key (errorCode, else status)                | Outcome                                             |
/// |---------------------------------------------|-----------------------------------------------------|
/// | HTTP 2xx                                    | delivered(id: the name)                             |
/// | `UNREGISTERED`, `SENDER_ID_MISMATCH`        | rejected, invalidates the token                     |
/// | `INVALID_ARGUMENT`                          | rejected; invalidates only when about the token     |
/// | `THIRD_PARTY_AUTH_ERROR`, `APNS_AUTH_ERROR` | rejected (the APNs/Web Push key in Firebase is bad: ``DeliveryCode/firebaseCredentialsRefused``) |
/// | `QUOTA_EXCEEDED`, `UNAVAILABLE`, `INTERNAL`; status `RESOURCE_EXHAUSTED` | transient, with `Retry-After` |
/// | `PERMISSION_DENIED`                         | rejected (without an errorCode: ``DeliveryCode/sendingNotPermitted``) |
/// | `UNAUTHENTICATED` (no errorCode)            | unauthenticated: renew the OAuth2 token             |
/// | anything else: HTTP 401                     | unauthenticated(`HTTP 401`)                         |
/// | HTTP 429, 5xx                               | transient, with `Retry-After`                       |
/// | other HTTP statuses                         | rejected                                            |
///
/// An unknown errorCode falls through to the status, and an unknown status to the HTTP code; the
/// reason reported is still the most specific string FCM gave. `UNSPECIFIED_ERROR` counts as no
/// errorCode at all (it carries no information, docs/providers.md B.3), so the status becomes the reason.
public enum FCMResponseClassifier {
    /// The outcome of one response.
    ///
    /// - Parameters:
    ///   - status: the HTTP `:status`.
    ///   - body: the response body.
    ///   - retryAfter: the `Retry-After` header, if any.
    ///   - now: the current time, Unix seconds (for a `Retry-After` date).
    public static func outcome(status: Int, body: [UInt8], retryAfter: String?, now: Int64) -> ClassifiedAnswer {
        if (200..<300).contains(status) { return .delivered(id: parseName(body) ?? "") }
        let error = FCMErrorBody.parse(body)
        // UNSPECIFIED_ERROR says nothing (docs/providers.md B.3), so the status speaks instead.
        let code = error?.errorCode == "UNSPECIFIED_ERROR" ? nil : error?.errorCode
        // Reasons are FCM's strings verbatim: errorCode, else status, else the HTTP code.
        let reason = code ?? error?.status ?? "HTTP \(status)"
        let transient = ClassifiedAnswer.transient(
            reason: reason, httpStatus: status, retryAfter: RetryAfter.parse(retryAfter, now: now))
        func rejected(invalidatesToken: Bool = false, code: DeliveryCode = .rejectedByProvider) -> ClassifiedAnswer {
            .rejected(reason: reason, httpStatus: status, invalidatesToken: invalidatesToken, code: code)
        }

        switch code {
        case "UNREGISTERED", "SENDER_ID_MISMATCH": return rejected(invalidatesToken: true)
        case "INVALID_ARGUMENT": return rejected(invalidatesToken: error?.concernsToken ?? false)
        // The Firebase project's APNs or Web Push credentials, not ours: retrying can't help.
        case "THIRD_PARTY_AUTH_ERROR", "APNS_AUTH_ERROR": return rejected(code: .firebaseCredentialsRefused)
        case "QUOTA_EXCEEDED", "UNAVAILABLE", "INTERNAL": return transient
        default: break
        }
        switch error?.status {
        case "INVALID_ARGUMENT": return rejected(invalidatesToken: error?.concernsToken ?? false)
        case "RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL": return transient
        // The service account's permission, when FCM says nothing more precise (the reason is then
        // the status).
        case "PERMISSION_DENIED": return rejected(code: code == nil ? .sendingNotPermitted : .rejectedByProvider)
        // Only a bare UNAUTHENTICATED means our access token: with an errorCode it would be
        // THIRD_PARTY_AUTH_ERROR, handled above.
        case "UNAUTHENTICATED" where code == nil: return .unauthenticated(reason: reason)
        default: break
        }
        switch status {
        case 401 where code == nil: return .unauthenticated(reason: reason)
        case 429, 500...599: return transient
        default: return rejected()
        }
    }

    /// The message's resource name from a success body, `{"name":"projects/p/messages/0:…"}`;
    /// nil when the body is not such an object.
    public static func parseName(_ body: [UInt8]) -> String? {
        guard let document = try? JSONParser.parse(body), case .string(let name) = document["name"] else {
            return nil
        }
        return name
    }
}
