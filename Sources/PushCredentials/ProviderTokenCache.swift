import PushPosix
import PushSync
public import PushTLS

/// The APNs provider token (ES256 JWT) of one (team, key), shared by every connection that uses it.
///
/// Apple rejects tokens older than an hour and answers `TooManyProviderTokenUpdates` when a
/// connection sees a new token more than once per 20 minutes (docs/providers.md A.7). So: one token,
/// renewed after ``renewAfter`` (50 min), and never sooner than ``minimumAge`` (20 min) — also not
/// when `ExpiredProviderToken` answers pile up. Signing happens once per renewal, not per request
/// or per connection.
public final class ProviderTokenCache: Sendable {
    public static let renewAfter: Int64 = 50 * 60
    public static let minimumAge: Int64 = 20 * 60

    public let teamID: String
    public let keyID: String
    private let signer: ES256Signer
    /// Unix seconds; injected so tests control token age.
    private let clock: @Sendable () -> Int64
    private let state = Locked<(token: String, header: String, issuedAt: Int64, signings: Int)>(("", "", 0, 0))

    public init(teamID: String, keyID: String, signer: ES256Signer, clock: @escaping @Sendable () -> Int64) {
        self.teamID = teamID
        self.keyID = keyID
        self.signer = signer
        self.clock = clock
    }

    /// The token to send now, minting a new one when the current one is 50 minutes old; `header`
    /// is the `authorization` value, `bearer <token>` (made once per token, not per request).
    public func current() throws(TLSError) -> (token: String, header: String, issuedAt: Int64) {
        let now = clock()
        return try state.withLock { state throws(TLSError) in
            if state.token.isEmpty || now - state.issuedAt >= Self.renewAfter {
                state.token = try APNsProviderToken.make(teamID: teamID, keyID: keyID, issuedAt: now, signer: signer)
                state.header = "bearer \(state.token)"
                state.issuedAt = now
                state.signings += 1
            }
            return (state.token, state.header, state.issuedAt)
        }
    }

    /// APNs said `ExpiredProviderToken` for the token issued at `issuedAt`: mint a new one, unless
    /// the current one is newer or younger than 20 minutes (the clocks disagree; minting more often
    /// would earn `TooManyProviderTokenUpdates`).
    public func reportExpired(issuedAt: Int64) {
        let now = clock()
        state.withLock { state in
            guard state.issuedAt == issuedAt, now - state.issuedAt >= Self.minimumAge else { return }
            state.token = ""
        }
    }

    /// When the current token was signed (Unix seconds); nil before the first.
    public var issuedAt: Int64? {
        state.withLock { $0.signings == 0 ? nil : $0.issuedAt }
    }

    /// How many tokens were signed so far (for tests and metrics).
    public var signings: Int { state.withLock { $0.signings } }
}
