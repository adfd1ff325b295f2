public import PushCore
public import PushCredentials
public import PushDelivery
import PushHTTP2
import PushSync

/// How an app proves itself to APNs.
public enum APNsCredentials: Sendable {
    /// Token auth: an ES256 JWT from a `.p8` key, shared per (team, key).
    case providerToken(ProviderTokenCache)
    /// Certificate auth: the app's certificate is the TLS client identity (set in the TLS context).
    case certificate
}

/// An app's APNs client: the delivery engine speaking APNs.
public typealias APNsClient = ProviderClient<APNsDialect>

/// APNs for the delivery engine: per token only `:path` (and the cached `authorization`) vary; the
/// payload and the other headers are the job's, built once per notification (docs/providers.md A).
public final class APNsDialect: ProviderDialect {
    /// Which of Apple's APIs a dialect speaks: one app has a client for each, sharing its credentials.
    public enum API: Sendable {
        /// Pushes to device tokens and broadcasts on channels (`api.push.apple.com`); results
        /// carry the `apns-id`.
        case push
        /// Channel management (`api-manage-broadcast.push.apple.com:2196`); results carry the
        /// `apns-channel-id` (a create's new channel).
        case channelManagement
    }

    public let providerName = "APNs"
    public let idHeader: [UInt8]?
    public let api: API
    /// nil with certificate auth. The same cache for both of an app's APIs: one provider token
    /// per (team, key), as Apple allows one renewal per 20 minutes (docs/providers.md A.7).
    public let providerTokens: ProviderTokenCache?
    /// The `:authority` of the app's endpoint (`api.push.apple.com`).
    let authority: String
    /// Request shapes of notifications that differ only in topic, push type and priority (no
    /// expiration, collapse id, apns-id or channel: nearly all), made once instead of per
    /// notification, which would take a builder, a template and their allocations each time.
    private let templates = Locked<[(key: TemplateKey, shape: APNsJob.Shape)]>([])
    private static let maxTemplates = 16

    private struct TemplateKey: Equatable {
        let topic: String
        let pushType: PushType
        let priority: Int
    }

    public init(credentials: APNsCredentials, authority: String = "api.push.apple.com", api: API = .push) {
        if case .providerToken(let cache) = credentials { providerTokens = cache } else { providerTokens = nil }
        self.authority = authority
        self.api = api
        idHeader = Array((api == .push ? "apns-id" : "apns-channel-id").utf8)
    }

    /// The same credentials for the app's other API (channel management beside pushes).
    public func credentials() -> APNsCredentials {
        providerTokens.map { .providerToken($0) } ?? .certificate
    }

    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization {
        guard let providerTokens else { return .none }
        do {
            let current = try providerTokens.current()
            return .credential(current.header, generation: current.issuedAt)
        } catch {
            return .failed("ProviderTokenError: \(error)")
        }
    }

    public func submit(
        _ request: ProviderRequest, job: APNsJob, authorization: [UInt8]?, on wire: ProviderWire,
        scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError> {
        // scratch holds the token's field (`/3/device/<token>`), rebuilt in place: no allocation per token.
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: job.slotPrefix)
        // Tokens are native strings: their bytes copied at once (the UTF-8 view went byte by byte).
        if request.token.utf8.withContiguousStorageIfAvailable({ scratch.append(contentsOf: $0) }) == nil {
            scratch.append(contentsOf: request.token.utf8)
        }
        return scratch.withUnsafeBytes { slot -> Result<Int32, ProviderWireError> in
            guard job.usesProviderToken, let authorization else {
                return Result { () throws(ProviderWireError) in
                    try wire.submitRequest(template: job.template, replacing: (job.slotIndex, slot), body: job.payload)
                }
            }
            return authorization.withUnsafeBytes { value -> Result<Int32, ProviderWireError> in
                Result { () throws(ProviderWireError) in
                    try wire.submitRequest(
                        template: job.template, replacing: (job.slotIndex, slot),
                        (APNsJob.authorizationIndex, value), body: job.payload)
                }
            }
        }
    }

    /// What the answer means, as ``APNsResponseClassifier`` reads its status and body; the id is
    /// the `apns-id` (or `apns-channel-id`) header.
    public func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
        // 200 for a push or a broadcast; the channel API answers 201 (created) and 204 (deleted).
        // Taken here before the classifier (which says the same) because it is nearly every answer.
        if (200..<300).contains(response.status) { return .delivered(id: response.id, httpStatus: response.status) }
        let answer = APNsResponseClassifier.outcome(status: response.status, body: response.body)
        return ProviderOutcome(answer) { _ in .delivered(id: response.id, httpStatus: response.status) }
    }

    public func authorizationRejected(generation: Int64) {
        providerTokens?.reportExpired(issuedAt: generation)
    }

    public var credentialIssuedAt: Int64? { providerTokens?.issuedAt }

    /// The job for an APNs push; nil for another platform's.
    /// The job for an APNs push (or broadcast) with the push API, for a channel request with the
    /// management API; nil for anything else.
    public func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> APNsJob? {
        switch (push, api) {
        case (.apns(let notification), .push):
            APNsJob(
                notification, notificationIndex: notificationIndex, shape: shape(for: notification),
                usesProviderToken: providerTokens != nil, collector: collector)
        case (.apnsChannel(let request), .channelManagement):
            APNsJob(
                channelRequest: request, notificationIndex: notificationIndex, authority: authority,
                usesProviderToken: providerTokens != nil, collector: collector)
        default:
            nil
        }
    }

    private func shape(for notification: PreparedNotification) -> APNsJob.Shape {
        let usesProviderToken = providerTokens != nil
        guard notification.expiration == nil, notification.collapseID == nil, notification.apnsID == nil,
            notification.broadcastBundleID == nil
        else {
            return APNsJob.shape(notification, authority: authority, usesProviderToken: usesProviderToken)
        }
        let key = TemplateKey(
            topic: notification.topic, pushType: notification.pushType, priority: notification.priority)
        if let known = templates.withLock({ entries in entries.first { $0.key == key }?.shape }) { return known }
        let made = APNsJob.shape(notification, authority: authority, usesProviderToken: usesProviderToken)
        templates.withLock { entries in
            // Bounded: an app sending to many topics keeps the latest ones.
            if entries.count >= Self.maxTemplates { entries.removeFirst() }
            entries.append((key, made))
        }
        return made
    }
}
