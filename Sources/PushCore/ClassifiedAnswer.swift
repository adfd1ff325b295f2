/// What a provider's answer means for one request, as its response classifier reads it
/// (``APNsResponseClassifier``, ``FCMResponseClassifier``, ``ADMResponseClassifier``,
/// ``WebPushResponseClassifier``): one type for every provider, so a
/// dialect turns it into the engine's outcome the same way whoever classified it.
public enum ClassifiedAnswer: Sendable, Equatable {
    /// 2xx. `id` is what the body names the delivery by: FCM's message resource name
    /// (`projects/p/messages/0:…`), ADM's registration id (a canonical one when it differs from
    /// the one sent); empty when the body has none.
    case delivered(id: String)
    /// A permanent refusal: the provider's reason verbatim (APNs' and ADM's `reason`, FCM's
    /// `errorCode`, else its `status`), else `HTTP <status>`. `invalidatesToken`: the token is dead,
    /// so a registry endpoint holding it is disabled. `unregisteredAt`: from an APNs 410, when the
    /// token became invalid (ms since the epoch), else 0. `code`: what kind of refusal it is.
    case rejected(
        reason: String, httpStatus: Int, invalidatesToken: Bool, unregisteredAt: Int64 = 0,
        code: DeliveryCode = .rejectedByProvider)
    /// Transient (429, 5xx, quota, unavailable): send again after a backoff, no sooner than
    /// `retryAfter` when the server said so (`Retry-After`).
    case transient(reason: String, httpStatus: Int, retryAfter: Duration?)
    /// The connection is going away (APNs `Shutdown`, `IdleTimeout`): send again on a new one.
    case connectionClosing(reason: String, httpStatus: Int)
    /// Our credential was not accepted: FCM's or ADM's 401 without a more precise reason (the
    /// OAuth2 access token), APNs' `ExpiredProviderToken` (403). Renew it once and send again; a
    /// second refusal is rejected.
    case unauthenticated(reason: String, httpStatus: Int = 401)
}
