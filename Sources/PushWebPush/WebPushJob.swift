import PushCore
public import PushDelivery
import PushHTTP2

/// One Web Push message as sent, shared by all of its subscriptions: the plaintext and the
/// header template (TTL, Urgency, Topic) are made once; per subscription the dialect encrypts
/// and fills in the origin, the path and the origin's VAPID token.
public final class WebPushJob: ProviderJob {
    public let notificationIndex: Int
    public let expiration: Int64?
    public let collector: DeliveryCollector
    let plaintext: [UInt8]
    let template: HTTP2HeaderTemplate

    static let authorityIndex = 2
    static let pathIndex = 3
    static let authorizationIndex = 4

    init(_ message: PreparedWebPushMessage, notificationIndex: Int, collector: DeliveryCollector) {
        self.notificationIndex = notificationIndex
        expiration = message.expiration
        self.collector = collector
        plaintext = message.plaintext
        var builder = HTTP2HeaderTemplate.Builder(capacity: 192, fields: 10)
        builder.add(":method", "POST")
        builder.add(":scheme", "https")
        // Per subscription: a literal each, as they differ per request.
        builder.add(":authority", "", indexable: false)
        builder.add(":path", "", indexable: false)
        // The origin's VAPID token: the same on a connection for hours, so worth indexing.
        builder.add("authorization", "")
        builder.add("ttl", String(message.ttl))
        builder.add("content-encoding", "aes128gcm")
        builder.add("content-type", "application/octet-stream")
        if !message.urgency.isEmpty { builder.add("urgency", message.urgency) }
        if !message.topic.isEmpty { builder.add("topic", message.topic) }
        // WNS refuses TTL 0 unless told not to cache (F.3); the other services ignore the header.
        if message.ttl == 0 { builder.add("x-wns-cache-policy", "no-cache") }
        template = HTTP2HeaderTemplate(builder)
    }
}
