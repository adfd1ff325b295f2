import PushCore
public import PushDelivery
import PushHTTP2

/// One notification as sent to APNs, shared by all of its tokens: the payload bytes and the header
/// list are built once; per token only `:path` (and the current `authorization`) differ.
public final class APNsJob: ProviderJob {
    /// Index of `:path` in ``headers``; the pseudo-headers come first, as HTTP/2 requires.
    static let pathIndex = 3
    /// Index of `authorization` with token auth (its value is set per request from the cache).
    static let authorizationIndex = 4

    public let notificationIndex: Int
    /// ``headers`` prepared once for nghttp2; per token only `:path` (and `authorization`) are set.
    let template: HTTP2HeaderTemplate
    let usesProviderToken: Bool
    let payload: [UInt8]
    /// Unix seconds after which APNs would drop it anyway: no retry past this.
    public let expiration: Int64?
    public let collector: DeliveryCollector

    init(
        _ notification: PreparedNotification, notificationIndex: Int, template: HTTP2HeaderTemplate,
        usesProviderToken: Bool, collector: DeliveryCollector
    ) {
        self.template = template
        self.notificationIndex = notificationIndex
        self.usesProviderToken = usesProviderToken
        self.payload = notification.payload
        self.expiration = notification.expiration
        self.collector = collector
    }

    /// A job with a template of its own (the dialect shares templates between jobs).
    convenience init(
        _ notification: PreparedNotification, notificationIndex: Int, authority: String, usesProviderToken: Bool,
        collector: DeliveryCollector
    ) {
        self.init(
            notification, notificationIndex: notificationIndex,
            template: Self.template(notification, authority: authority, usesProviderToken: usesProviderToken),
            usesProviderToken: usesProviderToken, collector: collector)
    }

    /// The header template of `notification`'s requests.
    static func template(
        _ notification: PreparedNotification, authority: String, usesProviderToken: Bool
    ) -> HTTP2HeaderTemplate {
        // Straight into the template's buffer: a [UInt8] per header name and value was a good
        // part of a 1-token Send's cost.
        var fields = HTTP2HeaderTemplate.Builder()
        fields.add(":method", "POST")
        fields.add(":scheme", "https")
        fields.add(":authority", authority)
        // Apple's HPACK guidance: :path and authorization as literals without indexing. (Its newer
        // page allows indexing a token-auth authorization, which would spare ~200 Huffman-coded
        // bytes per request; but nghttp2 sends every `authorization` field never-indexed.)
        fields.add(":path", "", indexable: false)
        if usesProviderToken {
            fields.add("authorization", "", indexable: false)
        }
        fields.add("apns-topic", notification.topic)
        fields.add("apns-push-type", notification.pushType.rawValue)
        fields.add("apns-priority", String(notification.priority))
        if let expiration = notification.expiration {
            fields.add("apns-expiration", String(expiration))
        }
        if let collapseID = notification.collapseID {
            fields.add("apns-collapse-id", collapseID)
        }
        if let apnsID = notification.apnsID {
            fields.add("apns-id", apnsID)
        }
        return HTTP2HeaderTemplate(fields)
    }

    /// The header list for one token (what ``template`` submits; for tests and logs).
    func headers(token: String, authorization: [UInt8]?) -> [HTTP2Header] {
        var list = template.headers
        list[Self.pathIndex].value = Self.pathPrefix + token.utf8
        if usesProviderToken, let authorization {
            list[Self.authorizationIndex].value = authorization
        }
        return list
    }

    static let pathPrefix = Array("/3/device/".utf8)
}
