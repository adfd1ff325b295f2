import PushCore

/// How long a webhook's sender waits before sending a batch again: from 1 s, doubling to 30 s,
/// jittered down to half so instances and webhooks do not come back in step, and never sooner
/// than the receiver's `Retry-After` (up to 10 minutes). A success starts over.
struct WebhookBackoff: Equatable {
    static let initial: Duration = .seconds(1)
    static let maximum: Duration = .seconds(30)
    static let maxRetryAfter: Duration = .seconds(600)

    /// Failures in a row.
    private(set) var failures = 0

    /// The wait after one more failure; `unit` is a random number in [0, 1).
    mutating func failed(retryAfter: Duration?, unit: Double) -> Duration {
        failures += 1
        let step = min(Self.initial * (1 << min(failures - 1, 16)), Self.maximum)
        let jittered = step * (0.5 + 0.5 * unit)
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, Self.maxRetryAfter))
    }

    mutating func succeeded() { failures = 0 }
}
