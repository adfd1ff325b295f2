/// One Publish recipient's outcome in the delivery log.
public struct DeliveryLogRecord: Sendable, Equatable {
    /// `delivered`, `rejected` or `failed` (as `pushgate.v1.Status`).
    public enum Status: String, Sendable, Equatable, CaseIterable {
        case delivered, rejected, failed
    }

    public var messageID: String
    public var endpointID: String
    public var app: String
    public var token: String
    public var status: Status
    public var reason: String
    public var httpStatus: Int
    /// The provider's id for the delivery (apns-id, FCM message name).
    public var providerID: String
    public var attempts: Int
    /// Unix ms.
    public var time: Int64

    public init(
        messageID: String, endpointID: String, app: String, token: String, status: Status, reason: String,
        httpStatus: Int, providerID: String, attempts: Int, time: Int64
    ) {
        self.messageID = messageID
        self.endpointID = endpointID
        self.app = app
        self.token = token
        self.status = status
        self.reason = reason
        self.httpStatus = httpStatus
        self.providerID = providerID
        self.attempts = attempts
        self.time = time
    }
}
