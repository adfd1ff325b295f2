import PushSync
public import PushTLS

/// An app's VAPID `Authorization` values, one per push service origin, shared by every
/// connection and signed once per origin and lifetime, never per request (RFC 8292 §2 allows a
/// token to be reused until it expires).
///
/// A token lives ``lifetime`` (12 hours: RFC 8292 allows at most 24, and a push service whose
/// clock runs ahead still accepts it) and is renewed once it is past ``renewAfter`` (6 hours),
/// well before its `exp`.
public final class VAPIDTokenCache: Sendable {
    public static let lifetime: Int64 = 12 * 3600
    public static let renewAfter: Int64 = 6 * 3600
    /// Origins kept at most; beyond, the oldest tokens are dropped (pools per origin are bounded
    /// too, so this is only reached after many origins came and went).
    static let maxOrigins = 1024

    public let subject: String
    /// The application server key, base64url (`k=`).
    public let publicKey: String
    private let signer: ES256Signer
    private let clock: @Sendable () -> Int64
    private let tokens = Locked<(byAudience: [String: Entry], signings: Int)>(([:], 0))

    private struct Entry {
        var value: [UInt8]
        var issuedAt: Int64
    }

    /// - Parameter subject: the `sub` claim, a `mailto:` or `https:` contact (checked by the config).
    public init(signer: ES256Signer, subject: String, clock: @escaping @Sendable () -> Int64) throws(TLSError) {
        self.signer = signer
        self.subject = subject
        self.clock = clock
        publicKey = base64URLEncode(try signer.publicPoint())
    }

    /// The `Authorization` value for requests to `audience` (`https://host[:port]`): `vapid
    /// t=<JWT>, k=<key>`, signed when there is none yet or it is past ``renewAfter``.
    public func authorization(audience: String) throws(TLSError) -> [UInt8] {
        let now = clock()
        return try tokens.withLock { state throws(TLSError) in
            if let entry = state.byAudience[audience], now - entry.issuedAt < Self.renewAfter { return entry.value }
            let token = try VAPIDToken.make(
                audience: audience, subject: subject, expiresAt: now + Self.lifetime, signer: signer)
            if state.byAudience.count >= Self.maxOrigins, state.byAudience[audience] == nil {
                let oldest = state.byAudience.min { $0.value.issuedAt < $1.value.issuedAt }!.key
                state.byAudience[oldest] = nil
            }
            let value = Array("vapid t=\(token), k=\(publicKey)".utf8)
            state.byAudience[audience] = Entry(value: value, issuedAt: now)
            state.signings += 1
            return value
        }
    }

    /// A rejected token younger than this is kept: the refusal is not about its age, and Apple
    /// asks for no more than one new token an hour (docs/providers.md F.5); ten minutes bounds
    /// how long a burst of refusals can make us sign.
    public static let minimumAgeToReplace: Int64 = 10 * 60

    /// The push service refused the token for `audience` (401/403): unless it is younger than
    /// ``minimumAgeToReplace``, the next request signs a new one.
    public func reportRejected(audience: String) {
        let now = clock()
        tokens.withLock { state in
            guard let entry = state.byAudience[audience], now - entry.issuedAt >= Self.minimumAgeToReplace else {
                return
            }
            state.byAudience[audience] = nil
        }
    }

    /// How many tokens were signed so far (for tests and metrics).
    public var signings: Int { tokens.withLock { $0.signings } }

    /// When the newest token was signed (Unix seconds); nil before the first.
    public var lastIssuedAt: Int64? { tokens.withLock { $0.byAudience.values.map(\.issuedAt).max() } }
}
