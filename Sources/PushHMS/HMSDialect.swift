public import PushCore
public import PushCredentials
public import PushDelivery
import PushHTTP2

/// An app's Huawei Push Kit client: the delivery engine speaking Push Kit.
public typealias HMSClient = ProviderClient<HMSDialect>

/// Huawei Push Kit for the delivery engine (docs/providers.md, Huawei): `POST
/// /v3/{projectId}/messages:send` with a self-signed JWT and a `push-type` header (v3, HarmonyOS
/// NEXT), or `POST /v1/{appId}/messages:send` with an OAuth access token (v2, HMS Core devices).
/// One request per token, so each token gets its own result (Push Kit takes up to 1,000 a request
/// but reports the failed ones only as a list in its message text); per token only the body's
/// token differs. Both credentials come from an ``AccessTokenCache`` (v3's signed locally).
public final class HMSDialect: ProviderDialect {
    public let providerName = "Huawei Push Kit"
    /// The request id is in the body.
    public let idHeader: [UInt8]? = nil
    public let accessTokens: AccessTokenCache
    public let api: HMSAPI
    /// By v3 `push-type` ("0", "6"); v2 has one, without the header.
    private let templates: [String: HTTP2HeaderTemplate]
    private static let authorizationIndex = 4

    /// - Parameter target: v3's project id, v2's app id (the path's `{projectId}` / `{appId}`).
    public init(api: HMSAPI, target: String, authority: String, accessTokens: AccessTokenCache) {
        self.api = api
        self.accessTokens = accessTokens
        func template(pushType: String?) -> HTTP2HeaderTemplate {
            var headers = [
                HTTP2Header(":method", "POST"),
                HTTP2Header(":scheme", "https"),
                HTTP2Header(":authority", authority),
                HTTP2Header(":path", Self.sendPath(api: api, target: target)),
                // Secret, and renewed hourly: a literal, never in the HPACK table.
                HTTP2Header(name: Array("authorization".utf8), value: [], indexable: false),
                HTTP2Header("content-type", "application/json; charset=UTF-8"),
            ]
            if let pushType { headers.append(HTTP2Header("push-type", pushType)) }
            return HTTP2HeaderTemplate(headers)
        }
        switch api {
        case .v3: templates = ["0": template(pushType: "0"), "6": template(pushType: "6")]
        case .v2: templates = ["": template(pushType: nil)]
        }
    }

    /// `/v3/{projectId}/messages:send` or `/v1/{appId}/messages:send`.
    public static func sendPath(api: HMSAPI, target: String) -> String {
        switch api {
        case .v3: "/v3/\(target)/messages:send"
        case .v2: "/v1/\(target)/messages:send"
        }
    }

    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization {
        accessTokens.authorization(for: waiter)
    }

    public func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> HMSJob? {
        guard case .hms(let message) = push, let template = templates[message.pushType ?? ""] else { return nil }
        return HMSJob(message, template: template, notificationIndex: notificationIndex, collector: collector)
    }

    public func submit(
        _ request: ProviderRequest, job: HMSJob, authorization: [UInt8]?, on wire: ProviderWire,
        scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError> {
        // The body outlives this call (nghttp2 sends it later): its own array, not the scratch.
        let body = job.message.body(token: request.token)
        let template = job.template
        return (authorization ?? []).withUnsafeBytes { value -> Result<Int32, ProviderWireError> in
            Result { () throws(ProviderWireError) in
                try wire.submitRequest(template: template, replacing: (Self.authorizationIndex, value), body: body)
            }
        }
    }

    public func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
        let answer = HMSResponseClassifier.outcome(
            status: response.status, body: response.body, retryAfter: response.retryAfter, now: now)
        return ProviderOutcome(answer) { requestID in .delivered(id: requestID) }
    }

    public func authorizationRejected(generation: Int64) {
        accessTokens.reportRejected(generation: generation)
    }

    public var credentialIssuedAt: Int64? { accessTokens.obtainedAt }
}

/// One Push Kit message as sent, shared by all of its tokens (``PreparedHMSMessage``).
public final class HMSJob: ProviderJob {
    public let notificationIndex: Int
    public let expiration: Int64?
    public let collector: DeliveryCollector
    let message: PreparedHMSMessage
    let template: HTTP2HeaderTemplate

    init(
        _ message: PreparedHMSMessage, template: HTTP2HeaderTemplate, notificationIndex: Int,
        collector: DeliveryCollector
    ) {
        self.message = message
        self.template = template
        self.notificationIndex = notificationIndex
        self.expiration = message.expiration
        self.collector = collector
    }
}
