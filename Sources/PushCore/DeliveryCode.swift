/// What kind of outcome a result is, as a value: what the gateway decides on (holding a recipient
/// for its provider, metrics labels, configuration hints in logs). ``DeliveryResult/reason`` keeps
/// the words clients see, the provider's verbatim or Pushgate's own with their details, and is
/// never parsed. Internal for now: the API carries the reason only.
public enum DeliveryCode: Sendable, Hashable {
    /// DELIVERED.
    case delivered

    // The provider's answers.

    /// The provider refused the request for good: the message, its headers or the token
    /// (``DeliveryResult/invalidatesToken`` says whether the token is dead).
    case rejectedByProvider
    /// The provider refused the app's own credentials (APNs `InvalidProviderToken`,
    /// `BadCertificate`, …): every send of the app fails until its configuration is fixed.
    case credentialsRefused
    /// FCM refused the APNs key or Web Push credentials uploaded to the Firebase project
    /// (`THIRD_PARTY_AUTH_ERROR`, `APNS_AUTH_ERROR`).
    case firebaseCredentialsRefused
    /// FCM: the service account may not send for the Firebase project (`PERMISSION_DENIED`).
    case sendingNotPermitted
    /// Our credential was refused again after it was renewed (a second 401, `ExpiredProviderToken`).
    case unauthenticated
    /// The provider answered 429 or 5xx (or that the connection was going away) until the retries
    /// ran out.
    case providerUnavailable

    // Pushgate's own.

    /// No connection could be made, or the provider refused it (our certificate, a close before
    /// any answer): `ProviderUnreachable`.
    case unreachable
    /// The connection closed with the request unanswered: `ConnectionLost`.
    case connectionLost
    /// The request's stream was reset before an answer: `StreamReset(…)`.
    case streamReset
    /// The provider refused the request's stream too often without processing it: `StreamRefused`.
    case streamRefused
    /// The notification's expiration passed before it could be delivered: `Expired`.
    case expired
    /// The Send's deadline passed first: `DeadlineExceeded`.
    case deadlineExceeded
    /// The gateway is stopping: `Shutdown`.
    case shutdown
    /// Taken back before it was sent: its fan-out's message was cancelled (`Cancelled`; counted
    /// `cancelled`, never reported as a result).
    case cancelled
    /// No credential could be had: a provider token not signed (`ProviderTokenError`), an OAuth2
    /// token not fetched (`OAuthTokenError`).
    case noCredential
    /// The app is another platform's: `WrongPlatform`.
    case wrongPlatform
    /// Pushgate could not write this request (a header value holding CR or LF, a Web Push body
    /// not encrypted).
    case unsendable
    /// The token names no push service the app may send to (Web Push): `InvalidToken`.
    case unroutableToken
    /// The app already sends to as many origins as it may: `TooManyOrigins`.
    case tooManyOrigins
    /// The push service's host has only addresses the gateway may not connect to
    /// (`allow_private_addresses`): REJECTED.
    case addressRefused
}
