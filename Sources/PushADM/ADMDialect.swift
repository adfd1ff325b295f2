public import PushCore
public import PushCredentials
public import PushDelivery
import PushHTTP2

/// An app's ADM client: the delivery engine speaking Amazon Device Messaging.
public typealias ADMClient = ProviderClient<ADMDialect>

/// Amazon Device Messaging for the delivery engine: `POST /messaging/registrations/<id>/messages`
/// over HTTP/1.1 with the app's Login-with-Amazon access token (docs/providers.md D.1). The body is the message's, shared by every
/// registration id; per token only `:path` differs, built in the connection's scratch buffer.
public final class ADMDialect: ProviderDialect {
    public let providerName = "ADM"
    /// Amazon's request id, reported as the result's id.
    public let idHeader: [UInt8]? = Array("x-amzn-requestid".utf8)
    public let accessTokens: AccessTokenCache
    private let template: HTTP2HeaderTemplate
    private static let pathIndex = 3
    private static let authorizationIndex = 4
    private static let pathPrefix = Array("/messaging/registrations/".utf8)
    private static let pathSuffix = Array("/messages".utf8)

    public init(authority: String, accessTokens: AccessTokenCache) {
        self.accessTokens = accessTokens
        template = HTTP2HeaderTemplate([
            HTTP2Header(":method", "POST"),
            HTTP2Header(":scheme", "https"),
            HTTP2Header(":authority", authority),
            // Per token; a literal, as every value differs.
            HTTP2Header(name: Array(":path".utf8), value: [], indexable: false),
            // Secret and renewed hourly: a literal, never in the HPACK table.
            HTTP2Header(name: Array("authorization".utf8), value: [], indexable: false),
            HTTP2Header("content-type", "application/json"),
            HTTP2Header("accept", "application/json"),
            HTTP2Header("x-amzn-type-version", "com.amazon.device.messaging.ADMMessage@1.0"),
            HTTP2Header("x-amzn-accept-type", "com.amazon.device.messaging.ADMSendResult@1.0"),
        ])
    }

    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization {
        accessTokens.authorization(for: waiter)
    }

    public func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> ADMJob? {
        guard case .adm(let message) = push else { return nil }
        return ADMJob(message, notificationIndex: notificationIndex, collector: collector)
    }

    public func submit(
        _ request: ProviderRequest, job: ADMJob, authorization: [UInt8]?, on wire: ProviderWire,
        scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError> {
        // Registration ids are checked to need no escaping in a path segment (ADMRegistrationID).
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: Self.pathPrefix)
        scratch.append(contentsOf: request.token.utf8)
        scratch.append(contentsOf: Self.pathSuffix)
        let template = self.template
        let body = job.body
        return scratch.withUnsafeBytes { path -> Result<Int32, ProviderWireError> in
            (authorization ?? []).withUnsafeBytes { value -> Result<Int32, ProviderWireError> in
                Result { () throws(ProviderWireError) in
                    try wire.submitRequest(
                        template: template, replacing: (Self.pathIndex, path), (Self.authorizationIndex, value),
                        body: body)
                }
            }
        }
    }

    public func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
        let answer = ADMResponseClassifier.outcome(
            status: response.status, body: response.body, retryAfter: response.retryAfter, now: now)
        return ProviderOutcome(answer) { registrationID in
            // A different id in the answer is the device's canonical one: it replaces the old.
            let canonical = !registrationID.isEmpty && registrationID != token ? registrationID : ""
            return .delivered(id: response.id, canonicalToken: canonical)
        }
    }

    public func authorizationRejected(generation: Int64) {
        accessTokens.reportRejected(generation: generation)
    }

    public var credentialIssuedAt: Int64? { accessTokens.obtainedAt }
}
