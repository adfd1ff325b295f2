import PushTLS
import Synchronization

/// The access tokens a ``MockFCMServer`` has issued and when each expires (loop-monotonic
/// nanoseconds). Shared by all connections behind one Mutex: one lookup per send.
final class AccessTokens: Sendable {
    private let tokens = Mutex<[String: UInt64]>([:])

    /// A new random token (`ya29.` like Google's, then 32 random bytes base64url) valid until
    /// `expiresAt`. Expired tokens are swept when the table has grown.
    func issue(expiresAt: UInt64, now: UInt64) throws(TLSError) -> String {
        let token = "ya29.mock-" + base64URLEncode(try SecureRandom.bytes(count: 32))
        tokens.withLock { tokens in
            if tokens.count >= 1024, tokens.count.isMultiple(of: 1024) {
                tokens = tokens.filter { $0.value > now }
            }
            tokens[token] = expiresAt
        }
        return token
    }

    /// True when `token` was issued here and has not expired.
    func isValid(_ token: Substring, now: UInt64) -> Bool {
        tokens.withLock { $0[String(token)].map { now < $0 } ?? false }
    }

    /// Forgets every token: the next send with any of them gets 401.
    func revokeAll() { tokens.withLock { $0.removeAll() } }
}
