public import PushCore
public import PushCredentials
public import PushDelivery
import PushTLS
public import PushTransport
import PushWebPushCrypto

/// An app's Web Push client: the delivery engine speaking RFC 8030 to browsers' push services.
public typealias WebPushClient = ProviderClient<WebPushDialect>

/// Web Push for the delivery engine (docs/providers.md F): every subscription names its push
/// service, so requests are routed by token (a pool per origin); each is `POST <endpoint>` with
/// the message encrypted for that subscriber (RFC 8291: a fresh key and salt every time) and the
/// origin's VAPID token (RFC 8292), signed once per origin and shared.
public final class WebPushDialect: ProviderDialect {
    public let providerName = "WebPush"
    /// The message's URL at the push service, reported as the result's id.
    public let idHeader: [UInt8]? = Array("location".utf8)
    public let vapid: VAPIDTokenCache
    public let hosts: WebPushHostPolicy
    let subscriptions = WebPushSubscriptionCache()

    public init(vapid: VAPIDTokenCache, hosts: WebPushHostPolicy) {
        self.vapid = vapid
        self.hosts = hosts
    }

    public var routesByToken: Bool { true }

    /// A subscription on a host the app does not (or no longer) allows connects nowhere.
    public var failsUnroutedTokens: Bool { true }

    public func origin(ofToken token: String) -> HTTPSOrigin? {
        try? subscriptions.subscription(token, hosts: hosts).origin
    }

    /// VAPID tokens are per origin and put in by ``submit``; nothing per app.
    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization { .none }

    public func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> WebPushJob? {
        guard case .webpush(let message) = push else { return nil }
        return WebPushJob(message, notificationIndex: notificationIndex, collector: collector)
    }

    public func submit(
        _ request: ProviderRequest, job: WebPushJob, authorization: [UInt8]?, on wire: ProviderWire,
        scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError> {
        let subscription: WebPushSubscription
        let body: [UInt8]
        let vapidValue: [UInt8]
        do {
            // Checked when the Send was taken, parsed when it was routed: from the cache.
            subscription = try subscriptions.subscription(request.token, hosts: hosts)
            body = try encrypt(job.plaintext, for: subscription)
            vapidValue = try vapid.authorization(audience: Self.audience(of: subscription.origin))
        } catch {
            return .failure(ProviderWireError(description: "WebPush: \(error)", refusesRequestOnly: true))
        }
        let authority = Array(subscription.origin.authority.utf8)
        let target = Array(subscription.target.utf8)
        let template = job.template
        return authority.withUnsafeBytes { authority in
            target.withUnsafeBytes { target in
                vapidValue.withUnsafeBytes { vapidValue in
                    Result { () throws(ProviderWireError) in
                        try wire.submitRequest(
                            template: template, replacing: (WebPushJob.authorityIndex, authority),
                            (WebPushJob.pathIndex, target), (WebPushJob.authorizationIndex, vapidValue), body: body)
                    }
                }
            }
        }
    }

    /// The body for one subscriber: a fresh sender key and salt, one record, no padding.
    private func encrypt(_ plaintext: [UInt8], for subscription: WebPushSubscription) throws(TLSError) -> [UInt8] {
        try WebPushEncryption.encrypt(
            plaintext, receiver: subscription.receiverKey, authSecret: subscription.auth,
            sender: try P256KeyAgreementKey.generate(), salt: try SecureRandom.bytes(count: 16))
    }

    /// VAPID's `aud`: the push service's origin, `https://host` (with `:port` when not 443).
    static func audience(of origin: HTTPSOrigin) -> String { "https://" + origin.authority }

    public func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
        let answer = WebPushResponseClassifier.outcome(
            status: response.status, body: response.body, retryAfter: response.retryAfter, now: now)
        if response.status == 401 || response.status == 403, let origin = origin(ofToken: token) {
            // The service refused our token: the next request to it signs a new one.
            vapid.reportRejected(audience: Self.audience(of: origin))
        }
        return ProviderOutcome(answer) { _ in .delivered(id: response.id, httpStatus: response.status) }
    }

    /// VAPID tokens are renewed per origin (``VAPIDTokenCache/reportRejected(audience:)``).
    public func authorizationRejected(generation: Int64) {}

    public var credentialIssuedAt: Int64? { vapid.lastIssuedAt }
}
