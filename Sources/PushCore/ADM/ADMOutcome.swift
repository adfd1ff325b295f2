/// What an ADM answer means for one request.
public enum ADMOutcome: Sendable, Equatable {
    /// 200. `registrationID` is the one ADM answered in the body (`{"registrationID": …}`); when it
    /// differs from the one sent it is the device's canonical id, which replaces the old one.
    case delivered(registrationID: String)
    /// A permanent refusal. `reason` is ADM's `reason` verbatim (`InvalidRegistrationId`,
    /// `Unregistered`, `MessageTooLarge`, `InvalidData`, …), else `HTTP <status>`.
    /// `invalidatesToken`: the registration id is dead (a registry endpoint holding it is disabled).
    case rejected(reason: String, httpStatus: Int, invalidatesToken: Bool)
    /// Transient (429 `MaxRateExceeded`, 500, 503): send again after a backoff, no sooner than
    /// `retryAfter` when the server said so.
    case transient(reason: String, httpStatus: Int, retryAfter: Duration?)
    /// 401 `AccessTokenExpired` (or a bare 401): renew the access token once and send again.
    case unauthenticated(reason: String)
}
