import PushCore
import PushCredentials
import PushTLS

/// A verified VAPID token (RFC 8292): its claims, once its ES256 signature checked out with `k`.
/// Time, audience and subject are checked per push (``check(origin:now:)``): a cached token may
/// expire, and one token may be sent to several origins.
struct PresentedVAPIDToken: Sendable {
    let audience: String
    let subject: String?
    let expiry: Int64
    /// The JWT as sent.
    let jwt: String

    /// The `t` and `k` parameters of `Authorization: vapid t=<JWT>, k=<key>` (scheme in any case,
    /// parameters in any order, spaces around them ignored).
    static func parameters(of authorization: String?) -> Result<(token: String, key: String), VAPIDFailure> {
        guard let authorization else { return .failure(.missing) }
        let trimmed = authorization.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "vapid" else {
            return .failure(.unknownScheme)
        }
        var token: String?
        var key: String?
        for parameter in trimmed[space...].split(separator: ",") {
            let pair = parameter.filter { $0 != " " }
            guard let equals = pair.firstIndex(of: "=") else { continue }
            let value = String(pair[pair.index(after: equals)...])
            switch pair[..<equals] {
            case "t": token = value
            case "k": key = value
            default: continue
            }
        }
        guard let token, !token.isEmpty else { return .failure(.missingToken) }
        guard let key, !key.isEmpty else { return .failure(.missingKey) }
        return .success((token, key))
    }

    /// Verifies `jwt`'s shape and signature with the public key `key` (base64url of the 65-byte
    /// point; padding and standard base64, which autopush tolerates, are accepted too), as the
    /// gateway's own VAPID code reads tokens (PushCredentials).
    static func verify(jwt: String, key: String) -> Result<PresentedVAPIDToken, VAPIDFailure> {
        let urlSafe = String(key.drop { $0 == " " }.prefix { $0 != "=" }.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        guard let point = base64URLDecode(urlSafe), let verifier = ES256Verifier(uncompressedPoint: point) else {
            return .failure(.invalidKey)
        }
        switch VAPIDToken.verify(jwt, verifier: verifier) {
        case .failure(.malformed): return .failure(.invalidToken)
        case .failure(.badSignature): return .failure(.badSignature)
        case .success(let claims):
            return .success(
                PresentedVAPIDToken(
                    audience: claims.audience, subject: claims.subject, expiry: claims.expiresAt, jwt: jwt))
        }
    }

    /// Whether the token may authorize a push now to an endpoint of `origin`
    /// (`https://host[:port]`): the audience, an `exp` in the future and at most 24 hours ahead
    /// (autopush's bound), and a `sub` that is a `mailto:` or `https:` URL.
    func check(origin: String, now: Int64) -> VAPIDFailure? {
        guard audience == origin else { return .invalidAudience }
        guard expiry > now else { return .expired }
        guard expiry <= now + 86_400 else { return .expiryTooFar }
        guard let subject, VAPIDToken.isValidSubject(subject) else { return .badSubject }
        return nil
    }
}
