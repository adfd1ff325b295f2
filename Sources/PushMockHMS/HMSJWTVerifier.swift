import PushCore
import PushCredentials
import PushSync
import PushTLS

/// Checks v3 bearer JWTs as Push Kit does (docs/notes/hms-push-kit.md 1.3): header `alg` PS256
/// (RSASSA-PSS, SHA-256, salt 32) and `kid` the account's `key_id`; claims `iss` the account's
/// `sub_account`, `aud` Huawei's token URI, integer `iat` and `exp`; a signature that verifies with
/// the account's public key. Times are checked on every request: `exp` after now (else 80200005),
/// `iat` at most `clockSkew` ahead, and `exp − iat` within `maxLifetime` (else 80300036).
///
/// A sender reuses one JWT for up to an hour, so verified ones are kept by their text (bounded,
/// emptied when full): the PS256 verification happens once per JWT, not once per request.
final class HMSJWTVerifier: Sendable {
    struct Claims: Sendable {
        let issuedAt: Int64
        let expiresAt: Int64
    }

    private let verifier: RSAVerifier
    private let keyID: String
    private let issuer: String
    private let audience: String
    private let maxLifetime: Int64
    private let clockSkew: Int64
    private let limit: Int
    private let verified = Locked<[Substring: Claims]>([:])

    init(configuration: MockHMSConfiguration, limit: Int = 4096) {
        verifier = configuration.jwtVerifier
        keyID = configuration.serviceAccount.keyID
        issuer = configuration.serviceAccount.subAccount
        audience = configuration.jwtAudience
        maxLifetime = Int64(configuration.maxJWTLifetime)
        clockSkew = Int64(configuration.allowedClockSkew)
        self.limit = max(1, limit)
    }

    /// nil when `jwt` authorizes a send at `now` (Unix seconds), else the code to answer.
    func refusal(_ jwt: Substring, now: Int64) -> HMSCode? {
        let claims: Claims
        if let known = verified.withLock({ $0[jwt] }) {
            claims = known
        } else {
            // Verified outside the lock: the RSA operation is the slow part.
            guard let checked = verify(jwt) else { return .authenticationError }
            claims = checked
            verified.withLock { verified in
                if verified.count >= limit { verified.removeAll(keepingCapacity: true) }
                verified[jwt] = checked
            }
        }
        if claims.expiresAt - claims.issuedAt > maxLifetime { return .jwtLifetime }
        if claims.expiresAt <= now { return .jwtExpired }
        if claims.issuedAt > now + clockSkew { return .authenticationError }
        return nil
    }

    /// The claims of a well-formed, correctly signed JWT of this account; nil otherwise.
    private func verify(_ jwt: Substring) -> Claims? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = base64URLDecode(String(parts[0])),
            let claimBytes = base64URLDecode(String(parts[1])), let signature = base64URLDecode(String(parts[2])),
            let header = try? JSONParser.parse(headerBytes), let claims = try? JSONParser.parse(claimBytes)
        else { return nil }
        guard case .string("PS256")? = header["alg"], case .string(keyID)? = header["kid"],
            case .string(issuer)? = claims["iss"], case .string(audience)? = claims["aud"],
            case .number(let iat)? = claims["iat"], let issuedAt = Int64(iat),
            case .number(let exp)? = claims["exp"], let expiresAt = Int64(exp)
        else { return nil }
        let signingInput = Array(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard verifier.verify(signature, for: signingInput) else { return nil }
        return Claims(issuedAt: issuedAt, expiresAt: expiresAt)
    }
}
