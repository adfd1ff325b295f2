/// How often and how soon a notification that got a transient failure is sent again.
public struct RetryPolicy: Sendable {
    /// Sends in all, the first included. Default 3.
    public var maxAttempts: Int
    /// The delay before the first retry; doubled for each further one. Default 200 ms.
    public var initialBackoff: Duration
    /// The longest delay. Default 5 s.
    public var maxBackoff: Duration

    /// The longest `Retry-After` honoured: a server asking for more gets the request FAILED now
    /// (with its reason) instead of held that long. Default 60 s.
    public var maxRetryAfter: Duration

    /// Times one request may come back unprocessed (REFUSED_STREAM, or above a GOAWAY's last
    /// stream id) before it is FAILED `StreamRefused`. Such resends count no attempt (the provider
    /// never saw the request): the first goes at once, the rest after the same backoff as retries,
    /// so a provider refusing everything gets a bounded, spaced-out number of requests instead of
    /// a resend storm. Default 8.
    public var maxRefusals: Int

    public init(
        maxAttempts: Int = 3, initialBackoff: Duration = .milliseconds(200), maxBackoff: Duration = .seconds(5),
        maxRetryAfter: Duration = .seconds(60), maxRefusals: Int = 8
    ) {
        self.maxRefusals = maxRefusals
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxRetryAfter = maxRetryAfter
    }

    /// The delay before send number `attempt + 1`, after `attempt` sends: exponential with jitter in
    /// [½, 1] of the step so many failed requests do not come back at the same instant.
    /// - Parameter unit: a random number in [0, 1).
    public func backoff(afterAttempt attempt: Int, unit: Double) -> Duration {
        step(afterAttempt: attempt) * (0.5 + 0.5 * unit)
    }

    /// The delay before send number `attempt + 1` without jitter: `initialBackoff` doubled for each
    /// attempt after the first, at most `maxBackoff`. For callers that jitter it their own way.
    public func step(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        return min(initialBackoff * (1 << exponent), maxBackoff)
    }
}
