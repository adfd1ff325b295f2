import PushCore
import PushDelivery
import Testing

@testable import PushWebhook

@Suite("Webhook dialect")
struct WebhookDialectTests {
    @Test("the signature is t=<seconds>,v1=<hex HMAC-SHA256(secret, t.body)> (checked against Python's hmac)")
    func signature() {
        let value = WebhookDialect.signature(
            secret: Array("0123456789abcdef".utf8), body: Array(#"{"events":[]}"#.utf8), time: 1_700_000_000)
        #expect(value == "t=1700000000,v1=1f1c43683e76ee83b09613ab56fa5bdd3ce55f3ee41db00a92e22eea0376899e")
    }

    @Test("a batch's answer: 2xx delivered, 5xx transient on a new attempt later, other 4xx rejected")
    func outcomes() {
        let dialect = WebhookDialect(secret: Array("0123456789abcdef".utf8), userAgent: "t", clock: { 0 })
        #expect(
            dialect.outcome(of: ProviderResponse(status: 204), token: "d", now: 0)
                == .delivered(id: "", httpStatus: 204))
        guard
            case .transient(let reason, 503, _) = dialect.outcome(
                of: ProviderResponse(status: 503, retryAfter: "7", body: Array("busy".utf8)), token: "d", now: 0)
        else {
            Issue.record("503 is not transient")
            return
        }
        #expect(reason == "HTTP 503: busy (Retry-After: 7 s)")
        guard
            case .rejected(_, 401, _, false, _) = dialect.outcome(of: ProviderResponse(status: 401), token: "d", now: 0)
        else {
            Issue.record("401 is not a rejection")
            return
        }
    }

    @Test("only a webhook post makes a job")
    func jobs() {
        let dialect = WebhookDialect(secret: [1], userAgent: "t", clock: { 0 })
        let collector = DeliveryCollector(placeholders: [])
        let post = PreparedWebhookPost(
            deliveryID: "d", authority: "h:1", path: "/p", body: [], expiration: nil)
        #expect(dialect.makeJob(for: .webhook(post), notificationIndex: 0, collector: collector) != nil)
        #expect(PreparedPush.webhook(post).tokens == ["d"])
        #expect(
            PreparedPush.webhook(post).with(tokens: ["e"])
                == .webhook(
                    PreparedWebhookPost(deliveryID: "e", authority: "h:1", path: "/p", body: [], expiration: nil)))
    }
}
