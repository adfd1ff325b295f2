import Testing

@testable import PushCore

@Suite("Webhook answers")
struct WebhookResponseClassifierTests {
    @Test(
        "2xx delivers; 408, 425, 429 and 5xx are transient; anything else is a refusal",
        arguments: [
            (200, "delivered"), (202, "delivered"), (299, "delivered"), (408, "transient"), (425, "transient"),
            (429, "transient"), (500, "transient"), (503, "transient"), (599, "transient"), (301, "rejected"),
            (400, "rejected"), (401, "rejected"), (404, "rejected"), (410, "rejected"), (413, "rejected"),
        ])
    func statuses(status: Int, expected: String) {
        let kind =
            switch WebhookResponseClassifier.outcome(status: status, body: [], retryAfter: nil, now: 0) {
            case .delivered: "delivered"
            case .transient: "transient"
            case .rejected(_, _, false, _, _): "rejected"
            default: "other"
            }
        #expect(kind == expected)
    }

    @Test("a Retry-After travels in the reason and is read back; a body's first text line is kept, HTML is not")
    func reasons() {
        let answer = WebhookResponseClassifier.outcome(
            status: 429, body: Array("slow down\nplease".utf8), retryAfter: "30", now: 0)
        guard case .transient(let reason, 429, let wait) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(reason == "HTTP 429: slow down (Retry-After: 30 s)" && wait == .seconds(30))
        #expect(WebhookResponseClassifier.retryAfter(inReason: reason) == .seconds(30))
        #expect(WebhookResponseClassifier.retryAfter(inReason: "HTTP 503") == nil)
        #expect(WebhookResponseClassifier.retryAfter(inReason: "HTTP 503: (Retry-After: x s)") == nil)
        let html = WebhookResponseClassifier.outcome(
            status: 500, body: Array("<html>oops</html>".utf8), retryAfter: nil, now: 0)
        #expect(html == .transient(reason: "HTTP 500", httpStatus: 500, retryAfter: nil))
    }
}
