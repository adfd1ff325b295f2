/// What an FCM HTTP v1 answer means for one request (protocols.md, FCM error codes).
public enum FCMOutcome: Sendable, Equatable {
    /// 200: accepted; `name` is the message's resource name (`projects/p/messages/0:…`).
    case delivered(name: String)
    /// A permanent refusal. `reason` is FCM's `errorCode` verbatim (`UNREGISTERED`), else its
    /// `status` (`INVALID_ARGUMENT`), else `HTTP <status>`. `invalidatesToken`: the token is dead
    /// (UNREGISTERED, SENDER_ID_MISMATCH, or INVALID_ARGUMENT about the registration token), so a
    /// registry endpoint holding it is disabled.
    case rejected(reason: String, httpStatus: Int, invalidatesToken: Bool)
    /// Transient (QUOTA_EXCEEDED, UNAVAILABLE, INTERNAL, 429, 5xx): send again after a backoff, no
    /// sooner than `retryAfter` when the server said so (`Retry-After`).
    case transient(reason: String, httpStatus: Int, retryAfter: Duration?)
    /// 401 without an FCM error code: the OAuth2 access token was not accepted. Renew it once and
    /// send again; a second 401 is rejected.
    case unauthenticated(reason: String)
}
