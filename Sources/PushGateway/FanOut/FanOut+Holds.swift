import PushCore

/// Recipients held for a provider that cannot take them (docs/operations.md, "Provider outages"): a
/// page holds them instead of FAILing them (``FanOut/holdsFor(_:)``), the chunk parks when its pages
/// are done, and whoever claims it next sends to them first (``FanOutChunkMachine``).
extension FanOut {
    /// Whether a result says the provider could not take the message now (unreachable, 5xx/429
    /// after the engine's retries, connections lost, refused streams, no credential to be had):
    /// worth holding for. Not: a TTL that ran out, a wrong platform, a stopping gateway, a request
    /// taken back because its message was cancelled.
    static func holdsFor(_ result: DeliveryResult) -> Bool {
        guard result.status == .failed else { return false }
        return ![.expired, .wrongPlatform, .shutdown, .cancelled].contains(result.code)
    }
}
