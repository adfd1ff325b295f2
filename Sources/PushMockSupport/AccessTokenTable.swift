import PushCore
import PushPosix
import PushSync
package import PushTLS

/// The OAuth2 access tokens a mock server has issued and when each expires (loop-monotonic
/// nanoseconds). Shared by all connections behind one lock: one lookup per send.
package final class AccessTokenTable: Sendable {
    private let tokens = Locked<[String: UInt64]>([:])
    /// What every token starts with, the provider's shape (`ya29.mock-`, `Atc|mock-`).
    private let prefix: String

    package init(prefix: String) { self.prefix = prefix }

    /// A new random token (`prefix`, then 32 random bytes base64url) valid for `lifetime`
    /// seconds from `now`. Expired tokens are swept when the table has grown.
    package func issue(lifetime: Int, now: UInt64) throws(TLSError) -> String {
        let token = prefix + base64URLEncode(try SecureRandom.bytes(count: 32))
        let expiresAt = now &+ UInt64(max(1, lifetime)) &* 1_000_000_000
        tokens.withLock { tokens in
            if tokens.count >= 1024, tokens.count.isMultiple(of: 1024) {
                tokens = tokens.filter { $0.value > now }
            }
            tokens[token] = expiresAt
        }
        return token
    }

    /// True when `token` was issued here and has not expired.
    package func isValid(_ token: Substring, now: UInt64) -> Bool {
        tokens.withLock { $0[String(token)].map { now < $0 } ?? false }
    }

    /// True when the request carries `Authorization: Bearer <token>` with a valid token.
    package func authorizes(_ request: MockRequest, now: UInt64) -> Bool {
        request.bearerToken.map { isValid($0, now: now) } ?? false
    }

    /// Forgets every token: the next send with any of them is refused.
    package func revokeAll() { tokens.withLock { $0.removeAll() } }

    /// Issues a token and answers the token request with it (`access_token`, `expires_in`,
    /// `scope` when given, `token_type`), or a 500 `internal_failure` when no random bytes came
    /// (so a 200 means a token was issued).
    package func grant(lifetime: Int, now: UInt64, tokenType: String, scope: String? = nil) -> MockResponse {
        let lifetime = max(1, lifetime)
        let token: String
        do {
            token = try issue(lifetime: lifetime, now: now)
        } catch {
            return .oauth(500, error: "internal_failure", "Could not make a token: \(error)")
        }
        var writer = JSONWriter(reservingCapacity: 128)
        writer.beginObject()
        writer.key("access_token")
        writer.string(token)
        writer.key("expires_in")
        writer.int(lifetime)
        if let scope {
            writer.key("scope")
            writer.string(scope)
        }
        writer.key("token_type")
        writer.string(tokenType)
        writer.endObject()
        return .json(200, writer.bytes)
    }
}
