public import PushCore
public import PushCredentials
public import PushDelivery
import PushHTTP2

/// An app's FCM client: the delivery engine speaking FCM HTTP v1.
public typealias FCMClient = ProviderClient<FCMDialect>

/// FCM HTTP v1 for the delivery engine (docs/providers.md B): every request is
/// `POST /v1/projects/{project}/messages:send` with the app's OAuth2 access token; per token only
/// the body differs (the token is written between the message's prepared halves). FCM has no batch
/// endpoint, so one multiplexed stream per token is the fast way.
public final class FCMDialect: ProviderDialect {
    public let providerName = "FCM"
    /// FCM answers the message name in the body, not in a header.
    public let idHeader: [UInt8]? = nil
    public let accessTokens: AccessTokenCache
    /// The request headers, the same for every request of the app but `authorization`.
    private let template: HTTP2HeaderTemplate
    private static let authorizationIndex = 4

    /// - Parameters:
    ///   - projectID: the Firebase project (`/v1/projects/{projectID}/messages:send`).
    ///   - authority: the `:authority` of the FCM host.
    public init(projectID: String, authority: String, accessTokens: AccessTokenCache) {
        self.accessTokens = accessTokens
        template = HTTP2HeaderTemplate([
            HTTP2Header(":method", "POST"),
            HTTP2Header(":scheme", "https"),
            HTTP2Header(":authority", authority),
            HTTP2Header(":path", Self.sendPath(projectID: projectID)),
            // The bearer token changes hourly and is secret: a literal, never in the HPACK table.
            HTTP2Header(name: Array("authorization".utf8), value: [], indexable: false),
            HTTP2Header("content-type", "application/json; charset=UTF-8"),
        ])
    }

    /// `/v1/projects/{projectID}/messages:send`.
    public static func sendPath(projectID: String) -> String {
        "/v1/projects/\(projectID)/messages:send"
    }

    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization {
        accessTokens.authorization(for: waiter)
    }

    public func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> FCMJob? {
        guard case .fcm(let message) = push else { return nil }
        return FCMJob(message, notificationIndex: notificationIndex, collector: collector)
    }

    public func submit(
        _ request: ProviderRequest, job: FCMJob, authorization: [UInt8]?, on wire: ProviderWire,
        scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError> {
        // The body is handed to nghttp2 and outlives this call, so it is its own array (one per
        // token), not the connection's scratch buffer.
        let body = job.message.body(token: request.token)
        let template = self.template
        return (authorization ?? []).withUnsafeBytes { value -> Result<Int32, ProviderWireError> in
            Result { () throws(ProviderWireError) in
                try wire.submitRequest(template: template, replacing: (Self.authorizationIndex, value), body: body)
            }
        }
    }

    public func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
        let answer = FCMResponseClassifier.outcome(
            status: response.status, body: response.body, retryAfter: response.retryAfter, now: now)
        // The message's resource name is the delivery's id.
        return ProviderOutcome(answer) { name in .delivered(id: name) }
    }

    public func authorizationRejected(generation: Int64) {
        accessTokens.reportRejected(generation: generation)
    }

    public var credentialIssuedAt: Int64? { accessTokens.obtainedAt }
}
