/// What happened to one (notification, token), as `pushgate.v1.Status`.
public enum DeliveryStatus: Sendable, Hashable {
    /// The provider accepted it.
    case delivered
    /// The provider refused it for good; sending it again as is won't help.
    case rejected
    /// Gave up after retries, at expiry or at the deadline.
    case failed
}

/// The outcome for one (notification, token), mirroring `pushgate.v1.Result`.
public struct DeliveryResult: Sendable, Equatable {
    /// Index of the notification in the request.
    public var notificationIndex: Int
    /// The token as sent (normalized).
    public var token: String
    public var status: DeliveryStatus
    /// What kind of outcome this is, for the gateway to decide on; `reason` says it in words.
    public var code: DeliveryCode
    /// The provider's HTTP status; 0 when none was received.
    public var httpStatus: Int
    /// The provider's reason verbatim, or Pushgate's own reason for a failure (`DeadlineExceeded`).
    public var reason: String
    /// The provider's id for the delivery: the `apns-id` APNs answered with, the FCM message name
    /// (`projects/p/messages/…`), ADM's request id; the `id` of the API's result.
    public var providerID: String
    /// From a 410: when APNs learnt the token was invalid, ms since the epoch; 0 otherwise.
    public var unregisteredAt: Int64
    /// How many times the request was sent to the provider.
    public var attempts: Int
    /// The provider said the token is dead (APNs Unregistered/BadDeviceToken, FCM UNREGISTERED…):
    /// a registry endpoint holding it is disabled.
    public var invalidatesToken: Bool
    /// The provider's new token for this device (an ADM canonical registration id), to replace the
    /// one sent; empty when there is none.
    public var canonicalToken: String

    /// Creates a result.
    public init(
        notificationIndex: Int, token: String, status: DeliveryStatus, code: DeliveryCode, httpStatus: Int = 0,
        reason: String = "",
        providerID: String = "", unregisteredAt: Int64 = 0, attempts: Int = 0, invalidatesToken: Bool = false,
        canonicalToken: String = ""
    ) {
        self.notificationIndex = notificationIndex
        self.token = token
        self.status = status
        self.code = code
        self.httpStatus = httpStatus
        self.reason = reason
        self.providerID = providerID
        self.unregisteredAt = unregisteredAt
        self.attempts = attempts
        self.invalidatesToken = invalidatesToken
        self.canonicalToken = canonicalToken
    }
}
