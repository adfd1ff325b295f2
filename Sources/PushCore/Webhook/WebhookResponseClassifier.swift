/// What a webhook receiver's answer means for a batch (docs/webhooks.md):
///
/// | HTTP status | Outcome |
/// |---|---|
/// | 2xx | delivered: the batch leaves the outbox |
/// | 408, 425, 429, 5xx | transient, no sooner than `Retry-After`: the same batch is sent again |
/// | other (4xx, 3xx, 1xx) | rejected: the receiver refuses the batch for good; it is dropped and counted |
///
/// A redirect is not followed: the URL is the operator's, and following it would send signed
/// events somewhere nobody configured.
public enum WebhookResponseClassifier {
    /// The longest reason kept from a body.
    static let maxReasonBytes = 200

    /// The outcome of one response. `now`: Unix seconds (for a `Retry-After` date).
    public static func outcome(status: Int, body: [UInt8], retryAfter: String?, now: Int64) -> ClassifiedAnswer {
        if (200..<300).contains(status) { return .delivered(id: "") }
        let reason = "HTTP \(status)" + (summary(of: body).map { ": " + $0 } ?? "")
        switch status {
        case 408, 425, 429, 500...599:
            // The engine does not retry a webhook's request (its outbox does, for hours), so the
            // receiver's Retry-After travels in the reason, for the outbox's backoff and the log.
            let wait = RetryAfter.parse(retryAfter, now: now)
            let said = wait.map { " \(retryAfterMarker)\($0.components.seconds) s)" } ?? ""
            return .transient(reason: reason + said, httpStatus: status, retryAfter: wait)
        default:
            return .rejected(reason: reason, httpStatus: status, invalidatesToken: false, code: .rejectedByProvider)
        }
    }

    static let retryAfterMarker = "(Retry-After: "

    /// The `Retry-After` a transient answer's reason carries, if any.
    public static func retryAfter(inReason reason: String) -> Duration? {
        guard let last = reason.split(separator: "(", omittingEmptySubsequences: false).last,
            last.hasPrefix("Retry-After: ")
        else { return nil }
        let digits = last.dropFirst("Retry-After: ".count).prefix { $0.isASCII && $0.isNumber }
        return Int64(digits).map { .seconds($0) }
    }

    /// The body's first line when it is short printable text (a receiver's own error message);
    /// nil for empty, binary or HTML bodies.
    static func summary(of body: [UInt8]) -> String? {
        guard !body.isEmpty, body.first != UInt8(ascii: "<") else { return nil }
        let start = body.prefix(maxReasonBytes)
        guard start.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x0A || $0 == 0x0D }) else { return nil }
        let line = String(decoding: start, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init)
        return line?.isEmpty == false ? line : nil
    }
}
