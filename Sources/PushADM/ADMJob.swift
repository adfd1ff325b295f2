import PushCore
public import PushDelivery

/// One ADM message as sent, shared by all of its registration ids: the body is built once
/// (``PreparedADMMessage``); per token only the `:path` differs.
public final class ADMJob: ProviderJob {
    public let notificationIndex: Int
    public let expiration: Int64?
    public let collector: DeliveryCollector
    let body: [UInt8]

    init(_ message: PreparedADMMessage, notificationIndex: Int, collector: DeliveryCollector) {
        self.body = message.body
        self.notificationIndex = notificationIndex
        self.expiration = message.expiration
        self.collector = collector
    }
}
