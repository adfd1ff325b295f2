import PushCore
public import PushDelivery
import PushHTTP2

/// One APNs request shape, shared by all of its tokens: the payload bytes and the header list are
/// built once; per token one field differs (the ``slotIndex``: `:path` of a device push, or
/// `apns-channel-id` of a broadcast or channel request), plus the current `authorization`.
public final class APNsJob: ProviderJob {
    /// Index of `:path` in the template; the pseudo-headers come first, as HTTP/2 requires.
    static let pathIndex = 3
    /// Index of `authorization` with token auth (its value is set per request from the cache).
    static let authorizationIndex = 4

    public let notificationIndex: Int
    /// The header list prepared once for nghttp2; per token only the slot (and `authorization`) are set.
    let template: HTTP2HeaderTemplate
    let usesProviderToken: Bool
    let payload: [UInt8]
    /// The field that carries the token, and the bytes before the token in it (`/3/device/`).
    let slotIndex: Int
    let slotPrefix: [UInt8]
    /// Unix seconds after which APNs would drop it anyway: no retry past this.
    public let expiration: Int64?
    public let collector: DeliveryCollector

    /// The header template of a notification's requests and the field that carries each token;
    /// the dialect shares these between jobs that differ only in their tokens.
    struct Shape: Sendable {
        let template: HTTP2HeaderTemplate
        let slot: (index: Int, prefix: [UInt8])
    }

    /// A push to device tokens (`/3/device/<token>`), or with `broadcastBundleID` to one channel,
    /// with its request shape made or shared by the dialect.
    convenience init(
        _ notification: PreparedNotification, notificationIndex: Int, shape: Shape, usesProviderToken: Bool,
        collector: DeliveryCollector
    ) {
        self.init(
            template: shape.template, slot: shape.slot, payload: notification.payload,
            expiration: notification.expiration, notificationIndex: notificationIndex,
            usesProviderToken: usesProviderToken, collector: collector)
    }

    /// A job with a request shape of its own.
    convenience init(
        _ notification: PreparedNotification, notificationIndex: Int, authority: String, usesProviderToken: Bool,
        collector: DeliveryCollector
    ) {
        self.init(
            notification, notificationIndex: notificationIndex,
            shape: Self.shape(notification, authority: authority, usesProviderToken: usesProviderToken),
            usesProviderToken: usesProviderToken, collector: collector)
    }

    /// The request shape of `notification`.
    static func shape(_ notification: PreparedNotification, authority: String, usesProviderToken: Bool) -> Shape {
        // Straight into the template's buffer: a [UInt8] per header name and value was a good
        // part of a 1-token Send's cost.
        var fields = HTTP2HeaderTemplate.Builder()
        let broadcastPath = notification.broadcastBundleID.map { "/4/broadcasts/apps/\($0)" }
        Self.addRequestLine(
            &fields, method: "POST", authority: authority, path: broadcastPath ?? "",
            usesProviderToken: usesProviderToken)
        var slot = (index: Self.pathIndex, prefix: Self.pathPrefix)
        if broadcastPath != nil {
            // A broadcast names its channel instead of a topic (docs/providers.md A.10).
            slot = (fields.count, [])
            fields.add("apns-channel-id", "")
        } else {
            fields.add("apns-topic", notification.topic)
        }
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
        return Shape(template: HTTP2HeaderTemplate(fields), slot: slot)
    }

    /// A channel management request (docs/providers.md A.9): read and delete name the channel in
    /// `apns-channel-id` (the token); create and list have no per-token field, so `:path` is the slot
    /// and the (empty) token adds nothing to it.
    convenience init(
        channelRequest request: APNsChannelRequest, notificationIndex: Int, authority: String,
        usesProviderToken: Bool, collector: DeliveryCollector
    ) {
        var fields = HTTP2HeaderTemplate.Builder()
        Self.addRequestLine(
            &fields, method: request.method, authority: authority, path: request.namesChannel ? request.path : "",
            usesProviderToken: usesProviderToken)
        var slot = (index: Self.pathIndex, prefix: Array(request.path.utf8))
        if request.namesChannel {
            slot = (fields.count, [])
            fields.add("apns-channel-id", "")
        }
        if let requestID = request.requestID {
            fields.add("apns-request-id", requestID)
        }
        let body = request.body
        if !body.isEmpty {
            fields.add("content-type", "application/json")
        }
        self.init(
            template: HTTP2HeaderTemplate(fields), slot: slot, payload: body, expiration: nil,
            notificationIndex: notificationIndex, usesProviderToken: usesProviderToken, collector: collector)
    }

    private init(
        template: HTTP2HeaderTemplate, slot: (index: Int, prefix: [UInt8]), payload: [UInt8], expiration: Int64?,
        notificationIndex: Int, usesProviderToken: Bool, collector: DeliveryCollector
    ) {
        self.template = template
        self.slotIndex = slot.index
        self.slotPrefix = slot.prefix
        self.payload = payload
        self.expiration = expiration
        self.notificationIndex = notificationIndex
        self.usesProviderToken = usesProviderToken
        self.collector = collector
    }

    /// The pseudo-headers and (with token auth) the `authorization` placeholder, at the indices
    /// ``pathIndex`` and ``authorizationIndex``.
    private static func addRequestLine(
        _ fields: inout HTTP2HeaderTemplate.Builder, method: String, authority: String, path: String,
        usesProviderToken: Bool
    ) {
        fields.add(":method", method)
        fields.add(":scheme", "https")
        fields.add(":authority", authority)
        // Apple's HPACK guidance: :path and authorization as literals without indexing. (Its newer
        // page allows indexing a token-auth authorization, which would spare ~200 Huffman-coded
        // bytes per request; but nghttp2 sends every `authorization` field never-indexed.)
        fields.add(":path", path, indexable: false)
        if usesProviderToken {
            fields.add("authorization", "", indexable: false)
        }
    }

    /// The header list for one token (what ``template`` submits; for tests and logs).
    func headers(token: String, authorization: [UInt8]?) -> [HTTP2Header] {
        var list = template.headers
        list[slotIndex].value = slotPrefix + token.utf8
        if usesProviderToken, let authorization {
            list[Self.authorizationIndex].value = authorization
        }
        return list
    }

    static let pathPrefix = Array("/3/device/".utf8)
}
