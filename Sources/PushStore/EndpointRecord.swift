/// A device registered with an app (an SNS platform endpoint).
public struct EndpointRecord: Sendable, Equatable {
    /// 32 lowercase hex characters: the creation time, then 80 random bits (`RandomID`).
    public var id: String
    /// The configured app's name.
    public var app: String
    /// The device token as stored: the caller normalizes it (APNs tokens lowercase) before storing.
    public var token: String
    /// `false` once the push service called the token invalid, or a client disabled it.
    public var enabled: Bool
    /// Arbitrary client data (the caller enforces the 2048-byte limit); `""` when unset.
    public var customUserData: String
    /// Unix milliseconds.
    public var createdAt: Int64
    /// Why the endpoint was disabled (e.g. `"Unregistered"`); `""` while enabled or when disabled by hand.
    public var disabledReason: String
    /// The person the device belongs to (the caller's id for them); `""`: none.
    public var userID: String

    /// Makes a record.
    public init(
        id: String, app: String, token: String, enabled: Bool, customUserData: String, createdAt: Int64,
        disabledReason: String, userID: String = ""
    ) {
        self.userID = userID
        self.id = id
        self.app = app
        self.token = token
        self.enabled = enabled
        self.customUserData = customUserData
        self.createdAt = createdAt
        self.disabledReason = disabledReason
    }
}
