import PushCore
import PushStore

/// What a published message becomes for each recipient: its payload per app, built once per
/// (message, app) and shared by every endpoint of that app; and which recipients it skips.
struct MessagePlan {
    enum Decision { case send, skip, fail }

    private let message: SNSMessage
    private let attributes: [String: String]
    private let publishedAtSeconds: Int64
    private let apps: [String: AppConfiguration]
    /// nil entry: the message has expired (TTL) or cannot be built for that app.
    private var notifications: [String: PreparedPush?] = [:]
    /// Attribute-scoped and body-scoped policies by their JSON, each parsed once.
    private var policies: [String: SNSFilterPolicy?] = [:]
    private var bodyPolicies: [String: SNSFilterPolicy?] = [:]
    /// What `MessageBody` policies read, per platform key (nil entry: not a JSON object).
    private var bodies: [PlatformKey: SNSMessageBody?] = [:]
    private(set) var expired = false
    /// The app of the last recipient found in `apps`.
    private var configuredApp: String? = nil

    /// - Parameter target: `.topic`, or `.endpoint` with the platform key of the endpoint's app.
    init(_ record: MessageRecord, target: SNSTarget, apps: [String: AppConfiguration]) throws(ValidationError) {
        message = try SNSMessage.parse(
            message: record.message, structure: record.messageStructure, target: target,
            attributes: record.attributes)
        attributes = record.attributes
        // A TTL counts from the fan-out's start: the publish, or its deliver_at.
        publishedAtSeconds = record.startsAt / 1000
        self.apps = apps
    }

    /// Skip disabled endpoints and those whose filter policy does not match; fail those of apps that
    /// are no longer configured.
    mutating func decide(_ target: FanOutTarget) -> Decision {
        decide(
            enabled: target.endpoint.enabled, app: target.endpoint.app,
            policyJSON: target.subscription.filterPolicyJSON, policyScope: target.subscription.filterPolicyScope)
    }

    /// ``decide(_:)`` from the fields it reads: a caller holding its targets in an array passes them
    /// without copying each target (every string in it) to make the call.
    mutating func decide(enabled: Bool, app: String, policyJSON: String, policyScope: String) -> Decision {
        guard enabled else { return .skip }
        // index(forKey:): `apps[…] != nil` copied the app's configuration out, for every recipient.
        // The last app found is remembered: a page's recipients are nearly all of one app.
        if app != configuredApp {
            guard apps.index(forKey: app) != nil else { return .fail }
            configuredApp = app
        }
        if !policyJSON.isEmpty {
            if policyScope == SNSFilterScope.messageBody {
                if bodyPolicies[policyJSON] == nil {
                    bodyPolicies[policyJSON] = try? SNSFilterPolicy.parse(policyJSON, nested: true)
                }
                guard let policy = bodyPolicies[policyJSON] ?? nil, let body = body(for: app),
                    policy.matches(body: body)
                else { return .skip }
            } else {
                if policies[policyJSON] == nil { policies[policyJSON] = try? SNSFilterPolicy.parse(policyJSON) }
                guard let policy = policies[policyJSON] ?? nil, policy.matches(attributes) else { return .skip }
            }
        }
        return .send
    }

    /// The body a `MessageBody` policy reads for an app's endpoints: the text its platform is sent
    /// (its key's in a `json` message, else `default`; the message itself otherwise).
    private mutating func body(for appName: String) -> SNSMessageBody? {
        guard let key = apps[appName]?.platformKey else { return nil }
        if let cached = bodies[key] { return cached }
        let body = message.text(for: key).flatMap { SNSMessageBody($0.text) }
        bodies[key] = .some(body)
        return body
    }

    /// The notification (without tokens) for an app's endpoints; nil when the message expired.
    mutating func notification(for appName: String) -> PreparedPush? {
        if let cached = notifications[appName] { return cached }
        guard let app = apps[appName] else { return nil }
        let key = app.platformKey
        let built: PreparedPush?
        let now = unixMilliseconds() / 1000
        do {
            switch app.keys {
            case .apns(let apns):
                let options = try SNSAttributes.parse(attributes, platformKey: key)
                built = try SNSAPNsPayload.build(
                    message: message, key: key, options: options, bundleID: apns.bundleID,
                    publishedAt: publishedAtSeconds, now: now
                ).map(PreparedPush.apns)
            case .fcm:
                built = try SNSFCMPayload.build(
                    message: message, attributes: attributes, publishedAt: publishedAtSeconds, now: now
                ).map(PreparedPush.fcm)
            case .adm:
                built = try SNSADMPayload.build(
                    message: message, attributes: attributes, publishedAt: publishedAtSeconds, now: now
                ).map(PreparedPush.adm)
            case .webpush:
                built = try SNSWebPushPayload.build(
                    message: message, attributes: attributes, publishedAt: publishedAtSeconds, now: now
                ).map(PreparedPush.webpush)
            case .hms(let hms):
                built = try SNSHMSPayload.build(
                    message: message, attributes: attributes, api: hms.api, publishedAt: publishedAtSeconds, now: now
                ).map(PreparedPush.hms)
            }
        } catch {
            // Publish checked the message already; an app-specific problem (no bundle id) skips it.
            built = nil
        }
        if built == nil { expired = expired || isPastTTL(key) }
        notifications[appName] = .some(built)
        return built
    }

    private func isPastTTL(_ key: PlatformKey) -> Bool {
        guard let ttl = (try? SNSAttributes.parse(attributes, platformKey: key))?.ttlSeconds else { return false }
        return unixMilliseconds() / 1000 > publishedAtSeconds + ttl
    }
}
