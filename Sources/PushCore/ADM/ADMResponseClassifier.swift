/// Decides what an ADM send response means for its request (docs/providers.md D.3).
///
/// ADM answers 200 with `{"registrationID":"…"}` and errors with `{"reason":"…"}`. The reason
/// decides first, then the HTTP status:
///
/// | Reason (else HTTP status)                                      | Outcome                                   |
/// |----------------------------------------------------------------|-------------------------------------------|
/// | HTTP 2xx                                                       | delivered(id: the registrationID, `""` if absent) |
/// | `InvalidRegistrationId` (400), `Unregistered` (410)            | rejected, invalidates the token           |
/// | `InvalidData`, `InvalidConsolidationKey`, `InvalidExpiration`, `InvalidChecksum`, `InvalidType` (400), `MessageTooLarge` (413) | rejected |
/// | `AccessTokenExpired` (401)                                     | unauthenticated: renew the access token   |
/// | `MaxRateExceeded` (429)                                        | transient, with `Retry-After`             |
/// | any other reason, or none: HTTP 401                            | unauthenticated                           |
/// | HTTP 429, 5xx (500, 503)                                       | transient, with `Retry-After`             |
/// | other HTTP statuses                                            | rejected                                  |
///
/// Known reasons decide whatever the status, so `Unregistered` invalidates the token whether ADM
/// sends it with 410 or, as older descriptions of the API list it, with 400. Only those two
/// reasons invalidate: a bare 410 without a body is rejected but keeps the token, because
/// disabling endpoints on a status alone (a proxy's, say) can't be undone. Every 401 means our
/// access token: the sender renews it once and a second 401 is rejected, so an unknown 401
/// reason costs one renewal at most. Reasons are ADM's strings verbatim, else `HTTP <status>`.
public enum ADMResponseClassifier {
    /// The reasons after which the registration id is dead.
    public static let tokenReasons: Set<String> = ["InvalidRegistrationId", "Unregistered"]
    /// The reasons that refuse this message but say nothing about the registration id.
    public static let messageReasons: Set<String> = [
        "InvalidData", "InvalidConsolidationKey", "InvalidExpiration", "InvalidChecksum", "InvalidType",
        "MessageTooLarge",
    ]

    /// The outcome of one response.
    ///
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - body: the response body.
    ///   - retryAfter: the `Retry-After` header, if any (ADM documents it for throttling and unavailability, docs/providers.md D.3).
    ///   - now: the current time, Unix seconds (for a `Retry-After` date).
    public static func outcome(status: Int, body: [UInt8], retryAfter: String?, now: Int64) -> ClassifiedAnswer {
        if (200..<300).contains(status) { return .delivered(id: parseRegistrationID(body) ?? "") }
        let given = parseReason(body)
        let reason = given ?? "HTTP \(status)"
        let transient = ClassifiedAnswer.transient(
            reason: reason, httpStatus: status, retryAfter: RetryAfter.parse(retryAfter, now: now))
        switch given {
        case let known? where tokenReasons.contains(known):
            return .rejected(reason: reason, httpStatus: status, invalidatesToken: true, code: .rejectedByProvider)
        case let known? where messageReasons.contains(known):
            return .rejected(reason: reason, httpStatus: status, invalidatesToken: false, code: .rejectedByProvider)
        case "AccessTokenExpired": return .unauthenticated(reason: reason)
        case "MaxRateExceeded": return transient
        default: break
        }
        switch status {
        case 401: return .unauthenticated(reason: reason)
        case 429, 500...599: return transient
        default:
            return .rejected(reason: reason, httpStatus: status, invalidatesToken: false, code: .rejectedByProvider)
        }
    }

    /// The registration id from a success body, `{"registrationID":"amzn1.adm-registration.v3.…"}`;
    /// nil when the body is not such an object.
    public static func parseRegistrationID(_ body: [UInt8]) -> String? {
        stringMember("registrationID", of: body)
    }

    /// The reason from an error body, `{"reason":"Unregistered"}`; nil when the body is not such
    /// an object (empty, or a proxy's HTML page), so the HTTP status decides.
    public static func parseReason(_ body: [UInt8]) -> String? {
        stringMember("reason", of: body).flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func stringMember(_ key: String, of body: [UInt8]) -> String? {
        guard let document = try? JSONParser.parse(body), case .string(let value) = document[key] else { return nil }
        return value
    }
}
