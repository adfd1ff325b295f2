/// What a provider's answer means for one request, as its response classifier reads it
/// (``FCMResponseClassifier``, ``ADMResponseClassifier``): one type for every provider, so a
/// dialect turns it into the engine's outcome the same way whoever classified it.
public enum ClassifiedAnswer: Sendable, Equatable {
    /// 2xx. `id` is what the body names the delivery by: FCM's message resource name
    /// (`projects/p/messages/0:…`), ADM's registration id (a canonical one when it differs from
    /// the one sent); empty when the body has none.
    case delivered(id: String)
    /// A permanent refusal: the provider's reason verbatim (FCM's `errorCode`, else its `status`;
    /// ADM's `reason`), else `HTTP <status>`. `invalidatesToken`: the token is dead, so a registry
    /// endpoint holding it is disabled.
    case rejected(reason: String, httpStatus: Int, invalidatesToken: Bool)
    /// Transient (429, 5xx, quota, unavailable): send again after a backoff, no sooner than
    /// `retryAfter` when the server said so (`Retry-After`).
    case transient(reason: String, httpStatus: Int, retryAfter: Duration?)
    /// 401 without a more precise reason: the OAuth2 access token was not accepted. Renew it once
    /// and send again; a second 401 is rejected.
    case unauthenticated(reason: String)
}
