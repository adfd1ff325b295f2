import PushCore

/// The `fanout` config object: how Publish fan-outs are split into chunks that any instance sharing
/// the store may claim, and how this instance works them.
public struct FanOutSettings: Sendable, Equatable {
    /// `workers`: chunks this instance works at once (each with `FanOut.pagesInFlight` pages in
    /// flight; a worker may also have one chunk finishing its last pages, see `FanOut.work()`).
    /// Default 2; 0: this instance answers API calls but leaves fan-outs to the others.
    public var workers = 2
    /// `chunk_size`: subscriptions per chunk. Default 5,000. Smaller chunks spread one publish over
    /// more instances sooner; each chunk costs a few store round trips.
    public var chunkSize = 5_000
    /// `lease_seconds`: how long a claim holds a chunk without renewal; renewed every third of it.
    /// After an instance dies, its chunks wait this long before another instance resumes them.
    /// Instances' clocks must agree to well within it. Default 30.
    public var leaseSeconds = 30
    /// `poll_ms`: how often an idle instance looks for work published through other instances or left
    /// by a dead one (its own Publishes start at once). Default 1000.
    public var pollMilliseconds = 1_000
    /// `max_hold_seconds`: how long after a publish its recipients may wait for a provider that
    /// cannot take them (unreachable, or 5xx/429 after the engine's retries): their chunk parks with
    /// backoff and sends again until then, or until the message's TTL; after it they are FAILED.
    /// Default 14,400 (4 hours); 0: FAILED at once, as Send.
    public var maxHoldSeconds = 14_400
    /// `max_schedule_days`: how far ahead a Publish's `deliver_at` may be. Default 30.
    public var maxScheduleDays = 30

    public init() {}

    static func parse(_ reader: ConfigObject) throws(ConfigurationError) -> FanOutSettings {
        try reader.checkKeys([
            "workers", "chunk_size", "lease_seconds", "poll_ms", "max_hold_seconds", "max_schedule_days",
        ])
        var settings = FanOutSettings()
        if let n = try reader.int("workers", range: 0...64) { settings.workers = n }
        if let n = try reader.int("chunk_size", range: 1...1_000_000) { settings.chunkSize = n }
        if let n = try reader.int("lease_seconds", range: 1...3600) { settings.leaseSeconds = n }
        if let n = try reader.int("poll_ms", range: 10...60_000) { settings.pollMilliseconds = n }
        if let n = try reader.int("max_hold_seconds", range: 0...604_800) { settings.maxHoldSeconds = n }
        if let n = try reader.int("max_schedule_days", range: 1...3650) { settings.maxScheduleDays = n }
        return settings
    }
}

extension ConfigObject {
    /// A nested object, for its own typed reads.
    func object(_ key: String) throws(ConfigurationError) -> ConfigObject? {
        guard let value = members.last(where: { $0.0 == key })?.1 else { return nil }
        return try ConfigObject(value, path: "\(path).\(key)")
    }
}
