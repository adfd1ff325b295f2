import PushCore
public import PushDelivery
import PushHTTP2

/// One batch POST as the engine sends it: the body and the header template made once; each attempt
/// fills in its signature.
public final class WebhookJob: ProviderJob {
    public let notificationIndex: Int
    public let expiration: Int64?
    public let collector: DeliveryCollector
    let body: [UInt8]
    let template: HTTP2HeaderTemplate

    static let signatureIndex = 6

    init(_ post: PreparedWebhookPost, userAgent: String, notificationIndex: Int, collector: DeliveryCollector) {
        self.notificationIndex = notificationIndex
        expiration = post.expiration
        self.collector = collector
        body = post.body
        var builder = HTTP2HeaderTemplate.Builder(capacity: 256, fields: 8)
        builder.add(":method", "POST")
        builder.add(":scheme", "https")
        builder.add(":authority", post.authority)
        builder.add(":path", post.path)
        builder.add("content-type", "application/json")
        builder.add("pushgate-delivery", post.deliveryID, indexable: false)
        // Per attempt (its `t` is when it was sent).
        builder.add("pushgate-signature", "", indexable: false)
        builder.add("user-agent", userAgent)
        template = HTTP2HeaderTemplate(builder)
    }
}
