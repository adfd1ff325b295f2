/// What the connections of one origin share about a provider that refuses their handshakes
/// (issue #46), as a plain value the pool keeps under a lock: each connection backs off on its own
/// (``ProviderConnectionMachine``), but an app may have several (ADM: 4), and without this each
/// would be refused, logged and redialled in turn.
///
/// - A refusal of our certificate closes the gate for a backoff that grows with the origin's
///   refusals in a row (jittered, bounded by the retry policy's `maxBackoff`): requests sent
///   meanwhile are FAILED at once with its reason, without touching a connection.
/// - Every refusal is counted; it is logged when it starts a run, when its cause changes, and then
///   at most once per `logInterval`, with the refusals since the last line.
///
/// A run ends by itself: a refusal more than four `maxBackoff`s after the last one starts a new one.
struct OriginRefusalGate {
    private var closedUntil: UInt64 = 0
    private var reason = ""
    private var refusals = 0
    private var lastRefusalAt: UInt64 = 0
    private var loggedAt: UInt64?
    private var loggedLabel = ""
    private var unlogged = 0

    /// A connection of the origin was refused at `now`: whether to log it, and the refusals the
    /// line stands for (this one included). `unit`: a random number in [0, 1) for the jitter.
    mutating func refused(
        _ refusal: ConnectionRefusal, at now: UInt64, policy: RetryPolicy, logInterval: Duration, unit: Double
    ) -> (log: Bool, attempts: Int) {
        if refusals > 0 && now &- lastRefusalAt > 4 &* nanoseconds(policy.maxBackoff) {
            refusals = 0
            loggedAt = nil
            unlogged = 0
        }
        refusals += 1
        lastRefusalAt = now
        if refusal.refusesCertificate {
            reason = "ProviderUnreachable: \(refusal)"
            let until = now &+ nanoseconds(policy.backoff(afterAttempt: refusals, unit: unit))
            closedUntil = max(closedUntil, until)
        }
        unlogged += 1
        let due = loggedAt.map { now &- $0 >= nanoseconds(logInterval) } ?? true
        guard due || refusal.label != loggedLabel else { return (false, 0) }
        loggedAt = now
        loggedLabel = refusal.label
        defer { unlogged = 0 }
        return (true, unlogged)
    }

    /// Until when requests are FAILED at once (0: the gate is open).
    var closedUntilNanoseconds: UInt64 { closedUntil }

    /// The FAILED reason for a request sent at `now`, or nil when it may go to a connection.
    func rejection(at now: UInt64) -> String? { now < closedUntil ? reason : nil }
}
