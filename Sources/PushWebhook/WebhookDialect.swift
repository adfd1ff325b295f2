public import PushCore
public import PushCredentials
public import PushDelivery
import PushTLS

/// A webhook's client: the delivery engine POSTing event batches to one receiver.
public typealias WebhookClient = ProviderClient<WebhookDialect>

/// Webhooks for the delivery engine (docs/webhooks.md): every request is a batch POSTed to the
/// webhook's URL, signed per attempt with the shared secret (`Pushgate-Signature: t=<unix
/// seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>`), so a batch resent later carries a
/// fresh `t` and passes a receiver's replay window.
public final class WebhookDialect: ProviderDialect {
    public let providerName = "Webhook"
    public let idHeader: [UInt8]? = nil
    private let secret: [UInt8]
    private let userAgent: String
    private let clock: @Sendable () -> Int64

    /// `clock`: Unix seconds, the signature's `t`.
    public init(secret: [UInt8], userAgent: String, clock: @escaping @Sendable () -> Int64) {
        self.secret = secret
        self.userAgent = userAgent
        self.clock = clock
    }

    /// The `Pushgate-Signature` value of `body` sent at `time` (Unix seconds).
    public static func signature(secret: [UInt8], body: [UInt8], time: Int64) -> String {
        var signed = Array(String(time).utf8)
        signed.append(UInt8(ascii: "."))
        signed.append(contentsOf: body)
        return "t=\(time),v1=" + Hex.lowercase(HMACSHA256.authenticationCode(key: secret, message: signed))
    }

    /// Receivers authenticate the batch by its signature; nothing goes in `authorization`.
    public func authorization(for waiter: any AuthorizationWaiter) -> ProviderAuthorization { .none }

    public func makeJob(for push: PreparedPush, notificationIndex: Int, collector: DeliveryCollector) -> WebhookJob? {
        guard case .webhook(let post) = push else { return nil }
        return WebhookJob(post, userAgent: userAgent, notificationIndex: notificationIndex, collector: collector)
    }

    public func submit(
        _ request: ProviderRequest, job: WebhookJob, authorization: [UInt8]?, on wire: ProviderWire,
        scratch: inout [UInt8]
    ) -> Result<Int32, ProviderWireError> {
        let value = Array(Self.signature(secret: secret, body: job.body, time: clock()).utf8)
        let template = job.template
        let body = job.body
        return value.withUnsafeBytes { value in
            Result { () throws(ProviderWireError) in
                try wire.submitRequest(template: template, replacing: (WebhookJob.signatureIndex, value), body: body)
            }
        }
    }

    public func outcome(of response: ProviderResponse, token: String, now: Int64) -> ProviderOutcome {
        let answer = WebhookResponseClassifier.outcome(
            status: response.status, body: response.body, retryAfter: response.retryAfter, now: now)
        return ProviderOutcome(answer) { _ in .delivered(id: "", httpStatus: response.status) }
    }

    public func authorizationRejected(generation: Int64) {}

    public var credentialIssuedAt: Int64? { nil }
}
