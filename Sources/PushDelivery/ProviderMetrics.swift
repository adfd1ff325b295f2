public import PushMetrics

/// What a provider client counts, resolved once per app.
public struct ProviderMetrics: Sendable {
    /// Submit → response time of every request that got a response; nil: not measured.
    public var requestSeconds: Histogram?
    /// One counter per protection that acted (`pushgate_provider_protections_total{app,event}`).
    public var protections: [ProviderProtection: Counter]
    /// Connections the provider ended during or right after the handshake, per alert name
    /// (`goaway`, `closed` without one): `pushgate_provider_handshake_refusals_total{app,alert}`.
    public var handshakeRefusals: (@Sendable (_ alert: String) -> Counter)?

    public init(
        requestSeconds: Histogram? = nil, protections: [ProviderProtection: Counter] = [:],
        handshakeRefusals: (@Sendable (_ alert: String) -> Counter)? = nil
    ) {
        self.requestSeconds = requestSeconds
        self.protections = protections
        self.handshakeRefusals = handshakeRefusals
    }
}

/// A protection of the engine against a provider that misbehaves, as counted.
public enum ProviderProtection: String, CaseIterable, Sendable {
    /// A request came back refused (never processed) a second time: its resends are spaced out.
    case refusedStreamsSpacedOut = "refused_streams_spaced_out"
    /// A request was FAILED `StreamRefused`: refused more often than `RetryPolicy.maxRefusals`.
    case streamRefused = "stream_refused"
    /// A connection made no progress for the stall timeout and was given up.
    case stalled = "stalled"
    /// A connection did not answer a PING in time and was given up.
    case pingTimeout = "ping_timeout"
    /// A request was REJECTED: its push service host resolved to a loopback, private or other
    /// non-global address (counted per request).
    case privateAddressRefused = "private_address_refused"
}
