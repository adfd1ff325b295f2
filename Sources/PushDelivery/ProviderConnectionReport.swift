/// What a provider connection tells its operators about (logged, and counted where it is a
/// protection at work).
enum ProviderConnectionReport {
    case connectFailed(any Error)
    /// The provider ended a connection during or right after its handshake. Counted every time;
    /// logged as the origin's ``OriginRefusalGate`` says (once per `refusalLogInterval`).
    case refused(ConnectionRefusal)
    /// The host's addresses are refused (`allow_private_addresses`); `requests` are REJECTED.
    case addressRefused(String, requests: Int)
    case closed(any Error)
    case goAway(String)
    /// A request came back refused (unprocessed) more than once: resends are now spaced out.
    case refusing(times: Int)
    /// A request was FAILED `StreamRefused`: refused more often than the policy allows.
    case refusedTooOften
    /// No progress for the stall timeout: the connection is given up.
    case stalled(String)
    /// No answer to a PING in time: the connection is given up.
    case pingTimeout
}

extension ProviderConnectionReport {
    /// The protection this report shows at work, if it is one.
    var protection: ProviderProtection? {
        switch self {
        case .refusing: .refusedStreamsSpacedOut
        case .refusedTooOften: .streamRefused
        case .stalled: .stalled
        case .pingTimeout: .pingTimeout
        case .addressRefused: .privateAddressRefused
        case .connectFailed, .refused, .closed, .goAway: nil
        }
    }
}

func nanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    return UInt64(max(seconds, 0)) &* 1_000_000_000 &+ UInt64(max(attoseconds, 0) / 1_000_000_000)
}
