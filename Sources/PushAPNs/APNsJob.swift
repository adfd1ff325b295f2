import PushCore
import PushDelivery
import PushHTTP2

/// One notification as sent to APNs, shared by all of its tokens: the payload bytes and the header
/// list are built once; per token only `:path` (and the current `authorization`) differ.
public final class APNsJob: ProviderJob {
    /// Index of `:path` in ``headers``; the pseudo-headers come first, as HTTP/2 requires.
    static let pathIndex = 3
    /// Index of `authorization` with token auth (its value is set per request from the cache).
    static let authorizationIndex = 4

    public let notificationIndex: Int
    let headers: [HTTP2Header]
    /// ``headers`` prepared once for nghttp2; per token only `:path` (and `authorization`) are set.
    let template: HTTP2HeaderTemplate
    let usesProviderToken: Bool
    let payload: [UInt8]
    /// Unix seconds after which APNs would drop it anyway: no retry past this.
    public let expiration: Int64?
    public let collector: DeliveryCollector

    init(
        _ notification: PreparedNotification, notificationIndex: Int, authority: String, usesProviderToken: Bool,
        collector: DeliveryCollector
    ) {
        var headers = [
            HTTP2Header(":method", "POST"),
            HTTP2Header(":scheme", "https"),
            HTTP2Header(":authority", authority),
            // Apple's HPACK guidance: :path and authorization as literals without indexing.
            HTTP2Header(name: Array(":path".utf8), value: [], indexable: false),
        ]
        if usesProviderToken {
            headers.append(HTTP2Header(name: Array("authorization".utf8), value: [], indexable: false))
        }
        headers.append(HTTP2Header("apns-topic", notification.topic))
        headers.append(HTTP2Header("apns-push-type", notification.pushType.rawValue))
        headers.append(HTTP2Header("apns-priority", String(notification.priority)))
        if let expiration = notification.expiration {
            headers.append(HTTP2Header("apns-expiration", String(expiration)))
        }
        if let collapseID = notification.collapseID {
            headers.append(HTTP2Header("apns-collapse-id", collapseID))
        }
        if let apnsID = notification.apnsID {
            headers.append(HTTP2Header("apns-id", apnsID))
        }
        self.headers = headers
        self.template = HTTP2HeaderTemplate(headers)
        self.notificationIndex = notificationIndex
        self.usesProviderToken = usesProviderToken
        self.payload = notification.payload
        self.expiration = notification.expiration
        self.collector = collector
    }

    /// The header list for one token (what ``template`` submits; for tests and logs).
    func headers(token: String, authorization: [UInt8]?) -> [HTTP2Header] {
        var list = headers
        list[Self.pathIndex].value = Self.pathPrefix + token.utf8
        if usesProviderToken, let authorization {
            list[Self.authorizationIndex].value = authorization
        }
        return list
    }

    static let pathPrefix = Array("/3/device/".utf8)
}
