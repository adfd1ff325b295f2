/// Decides what a push service's answer means for one subscription (docs/providers.md F.4).
///
/// The services answer with a status and, on errors, a body that differs between them: Apple's
/// `{"reason":"BadJwtToken"}`, Mozilla's `{"code":…,"errno":…,"error":"…","message":"…"}`, plain
/// text elsewhere. The status decides:
///
/// | HTTP status   | Outcome                                                                 |
/// |---------------|-------------------------------------------------------------------------|
/// | 2xx (201)     | delivered (the id is the `Location` header, read by the dialect)        |
/// | 404, 410      | rejected, invalidates the subscription (it expired or was unsubscribed) |
/// | 406 (WNS), 429, 5xx | transient, with `Retry-After`                                    |
/// | 400, 401, 403 (VAPID refused), 413, other | rejected with the service's reason            |
///
/// The reason is the body's `reason` (Apple), else `message` or `error` (Mozilla), else the
/// body's text when it is short plain text, else `HTTP <status>`; at most 200 bytes of it.
public enum WebPushResponseClassifier {
    /// The longest reason kept from a body.
    static let maxReasonBytes = 200

    /// The outcome of one response. `now`: Unix seconds (for a `Retry-After` date).
    public static func outcome(status: Int, body: [UInt8], retryAfter: String?, now: Int64) -> ClassifiedAnswer {
        if (200..<300).contains(status) { return .delivered(id: "") }
        let reason = reason(of: body).map { TextCap.prefix($0, maxBytes: maxReasonBytes) } ?? "HTTP \(status)"
        switch status {
        case 404, 410:
            return .rejected(reason: reason, httpStatus: status, invalidatesToken: true, code: .rejectedByProvider)
        // 406 is how WNS says "throttled" (with Retry-After), F.4.
        case 406, 429, 500...599:
            return .transient(reason: reason, httpStatus: status, retryAfter: RetryAfter.parse(retryAfter, now: now))
        default:
            return .rejected(reason: reason, httpStatus: status, invalidatesToken: false, code: .rejectedByProvider)
        }
    }

    /// The service's own words for a refusal, or nil (empty body, or one that says nothing).
    static func reason(of body: [UInt8]) -> String? {
        guard !body.isEmpty else { return nil }
        if let document = try? JSONParser.parse(body) {
            for key in ["reason", "message", "error"] {
                if case .string(let text)? = document[key], !text.isEmpty { return text }
            }
            return nil
        }
        // Plain text (FCM's web push answers are text): one short line of printable ASCII only,
        // never an HTML page.
        guard body.count <= maxReasonBytes, body.allSatisfy({ $0 >= 0x20 && $0 < 0x7F || $0 == 0x0A }),
            body.first != UInt8(ascii: "<")
        else { return nil }
        let text = String(decoding: body, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return text.isEmpty ? nil : text
    }
}
