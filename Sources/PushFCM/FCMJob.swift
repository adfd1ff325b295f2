import PushCore
public import PushDelivery

/// One FCM message as sent, shared by all of its tokens: the request body around the token is
/// built once (``PreparedFCMMessage``); per token only the token is written into it.
public final class FCMJob: ProviderJob {
    public let notificationIndex: Int
    public let expiration: Int64?
    public let collector: DeliveryCollector
    let message: PreparedFCMMessage

    init(_ message: PreparedFCMMessage, notificationIndex: Int, collector: DeliveryCollector) {
        self.message = message
        self.notificationIndex = notificationIndex
        self.expiration = message.expiration
        self.collector = collector
    }
}
