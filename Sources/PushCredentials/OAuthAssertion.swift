public import PushTLS

/// The signed JWT a service account trades for an OAuth2 access token (RFC 7523 JWT bearer
/// grant; docs/providers.md B.5).
///
/// Header `{"alg":"RS256","typ":"JWT","kid":"<private_key_id>"}`, claims `iss` (client_email),
/// `scope`, `aud` (the token endpoint), `iat` and `exp` (at most an hour later), RS256-signed,
/// every part base64url without padding.
public enum OAuthAssertion {
    /// The scope FCM HTTP v1 sends need.
    public static let firebaseMessagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Google refuses assertions meant to live longer than this (seconds).
    public static let maxLifetime: Int64 = 3600
    /// How far `iat` may be ahead of the verifier's clock (seconds), for clock skew.
    public static let allowedClockSkew: Int64 = 60

    /// What an assertion claims.
    public struct Claims: Sendable, Equatable {
        public var issuer: String
        /// Space-separated scopes, as sent.
        public var scope: String
        public var audience: String
        public var issuedAt: Int64
        public var expiresAt: Int64

        public init(issuer: String, scope: String, audience: String, issuedAt: Int64, expiresAt: Int64) {
            self.issuer = issuer
            self.scope = scope
            self.audience = audience
            self.issuedAt = issuedAt
            self.expiresAt = expiresAt
        }

        /// The individual scopes.
        public var scopes: [String] { scope.split(separator: " ").map(String.init) }
    }

    /// Why an assertion was refused. ``description`` is the sentence the mock puts in
    /// `error_description`.
    public enum AssertionError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not three base64url parts, a part that is not a flat JSON object, or a claim missing
        /// or of the wrong type (named).
        case malformed(String)
        /// The header's `alg` is not RS256 (it says this).
        case unsupportedAlgorithm(String)
        /// The signature does not verify with the account's public key.
        case badSignature
        /// `exp` is not after now.
        case expired(expiresAt: Int64, now: Int64)
        /// `exp` is not after `iat`, or more than ``maxLifetime`` after it.
        case badLifetime(issuedAt: Int64, expiresAt: Int64)
        /// `iat` is more than ``allowedClockSkew`` seconds ahead of now.
        case issuedInFuture(issuedAt: Int64, now: Int64)

        public var description: String {
            switch self {
            case .malformed(let what): "Invalid JWT: \(what)"
            case .unsupportedAlgorithm(let alg): "Invalid JWT: alg must be RS256, got \"\(alg)\""
            case .badSignature: "Invalid JWT Signature."
            case .expired(let exp, let now): "Invalid JWT: Token has expired (exp \(exp), now \(now))."
            case .badLifetime(let iat, let exp):
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                    + "Check your iat and exp values in the JWT claim (iat \(iat), exp \(exp))."
            case .issuedInFuture(let iat, let now):
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                    + "Check your iat and exp values in the JWT claim (iat \(iat) is after now \(now))."
            }
        }
    }

    /// Builds and signs an assertion for `account`.
    ///
    /// - Parameters:
    ///   - audience: the token endpoint (the account's `token_uri`).
    ///   - issuedAt: Unix seconds, normally now.
    ///   - lifetime: seconds until `exp`, 1…3600.
    ///   - signer: the account's key (``GoogleServiceAccount/signer()``), made once and reused.
    public static func make(
        account: GoogleServiceAccount, audience: String, scope: String = firebaseMessagingScope,
        issuedAt: Int64, lifetime: Int64 = 3600, signer: RSASigner
    ) throws(TLSError) -> String {
        guard (1...maxLifetime).contains(lifetime) else {
            throw TLSError(.invalidInput, "assertion lifetime must be 1 to \(maxLifetime) seconds, got \(lifetime)")
        }
        let header = FlatJSONObject.serialize([
            ("alg", .string("RS256")), ("typ", .string("JWT")), ("kid", .string(account.privateKeyID)),
        ])
        let claims = FlatJSONObject.serialize([
            ("iss", .string(account.clientEmail)), ("scope", .string(scope)), ("aud", .string(audience)),
            ("iat", .integer(issuedAt)), ("exp", .integer(issuedAt + lifetime)),
        ])
        let signingInput = base64URLEncode(header) + "." + base64URLEncode(claims)
        return signingInput + "." + base64URLEncode(try signer.sign(Array(signingInput.utf8)))
    }

    /// Checks an assertion as Google's token endpoint does: shape, `alg`, signature, then the
    /// times against `now` (Unix seconds). Who the issuer, audience and scopes must be is the
    /// caller's to check on the returned claims.
    public static func verify(_ jwt: String, verifier: RSAVerifier, now: Int64) -> Result<Claims, AssertionError> {
        let jws: CompactJWS
        switch CompactJWS.parse(jwt) {
        case .success(let parsed): jws = parsed
        case .failure(.parts): return .failure(.malformed("expected three dot-separated parts"))
        case .failure(.header): return .failure(.malformed("the header is not base64url of a JSON object"))
        case .failure(.claims): return .failure(.malformed("the claim set is not base64url of a JSON object"))
        case .failure(.signature): return .failure(.malformed("the signature is not base64url"))
        }
        let claims = jws.claims
        guard let alg = jws.header.string("alg") else { return .failure(.malformed("alg is missing")) }
        guard alg == "RS256" else { return .failure(.unsupportedAlgorithm(alg)) }
        guard verifier.verify(jws.signature, for: jws.signingInput) else { return .failure(.badSignature) }

        for name in ["iss", "scope", "aud"] where claims.string(name) == nil {
            return .failure(.malformed("\(name) is missing or not a string"))
        }
        for name in ["iat", "exp"] where claims.integer(name) == nil {
            return .failure(.malformed("\(name) is missing or not an integer"))
        }
        let parsed = Claims(
            issuer: claims.string("iss")!, scope: claims.string("scope")!, audience: claims.string("aud")!,
            issuedAt: claims.integer("iat")!, expiresAt: claims.integer("exp")!)
        if parsed.expiresAt <= parsed.issuedAt || parsed.expiresAt - parsed.issuedAt > maxLifetime {
            return .failure(.badLifetime(issuedAt: parsed.issuedAt, expiresAt: parsed.expiresAt))
        }
        if parsed.issuedAt > now + allowedClockSkew {
            return .failure(.issuedInFuture(issuedAt: parsed.issuedAt, now: now))
        }
        if parsed.expiresAt <= now { return .failure(.expired(expiresAt: parsed.expiresAt, now: now)) }
        return .success(parsed)
    }
}
