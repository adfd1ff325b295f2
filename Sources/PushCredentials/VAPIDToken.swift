import PushCore
public import PushTLS

/// VAPID (RFC 8292): the application server's identity on a Web Push request, a compact JWS
/// with ES256 (docs/providers.md F.5).
///
/// Header `{"typ":"JWT","alg":"ES256"}`, claims `{"aud":"<push service origin>","exp":<seconds>,
/// "sub":"<mailto: or https: contact>"}`, signature raw r‖s; sent as
/// `Authorization: vapid t=<JWT>, k=<public key>`, the key the 65-byte point in base64url.
public enum VAPIDToken {
    /// Builds and signs a token for one push service origin (`https://host[:port]`).
    public static func make(audience: String, subject: String, expiresAt: Int64, signer: ES256Signer) throws(TLSError)
        -> String
    {
        let header = base64URLEncode(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        var claims = JSONWriter(reservingCapacity: 96 + audience.utf8.count + subject.utf8.count)
        claims.beginObject()
        claims.key("aud")
        claims.string(audience)
        claims.key("exp")
        claims.int(expiresAt)
        claims.key("sub")
        claims.string(subject)
        claims.endObject()
        let signingInput = header + "." + base64URLEncode(claims.bytes)
        return signingInput + "." + base64URLEncode(try signer.sign(Array(signingInput.utf8)))
    }

    /// What a verified token claims.
    public struct Claims: Sendable, Equatable {
        public let audience: String
        public let expiresAt: Int64
        public let subject: String?
    }

    /// Why a token was not accepted.
    public enum Refusal: Error, Sendable, Equatable {
        /// Not three base64url parts of JSON, a header that does not say ES256 (or a `typ` other
        /// than JWT), or no `aud` or `exp`.
        case malformed
        /// Well formed, but the signature is not the key's.
        case badSignature
    }

    /// The claims of a token whose signature `verifier` accepts; expiry and audience are the
    /// caller's to judge.
    public static func verify(_ token: String, verifier: ES256Verifier) -> Result<Claims, Refusal> {
        guard case .success(let jws) = CompactJWS.parse(token), jws.header.string("alg") == "ES256",
            jws.header.string("typ").map({ $0 == "JWT" }) ?? true,
            let audience = jws.claims.string("aud"), let expiresAt = jws.claims.integer("exp")
        else { return .failure(.malformed) }
        guard verifier.verify(jws.signingInput, rawSignature: jws.signature) else { return .failure(.badSignature) }
        return .success(Claims(audience: audience, expiresAt: expiresAt, subject: jws.claims.string("sub")))
    }

    /// Whether `subject` is a contact RFC 8292 §2.1 allows: a `mailto:` or an `https:` URL, in
    /// printable ASCII.
    public static func isValidSubject(_ subject: String) -> Bool {
        let bytes = subject.utf8
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return false }
        for scheme in ["mailto:", "https://"] where subject.hasPrefix(scheme) {
            return bytes.count > scheme.utf8.count
        }
        return false
    }
}
