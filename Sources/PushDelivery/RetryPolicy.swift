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

    public init(
        maxAttempts: Int = 3, initialBackoff: Duration = .milliseconds(200), maxBackoff: Duration = .seconds(5),
        maxRetryAfter: Duration = .seconds(60)
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxRetryAfter = maxRetryAfter
    }

    /// The delay before send number `attempt + 1`, after `attempt` sends: exponential with jitter in
    /// [½, 1] of the step so many failed requests do not come back at the same instant.
    /// - Parameter unit: a random number in [0, 1).
    public func backoff(afterAttempt attempt: Int, unit: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 20)
        let step = min(initialBackoff * (1 << exponent), maxBackoff)
        return step * (0.5 + 0.5 * unit)
    }
}
