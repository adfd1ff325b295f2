import PushTLS

/// A compact JWS (RFC 7515 §7.1, the form of every JWT here: APNs provider tokens, Google
/// assertions, VAPID tokens) split into its parts, before any signature is checked.
struct CompactJWS {
    let header: FlatJSONObject
    let claims: FlatJSONObject
    let signature: [UInt8]
    /// What was signed: the first two parts and the dot between them.
    let signingInput: [UInt8]

    /// Which part is not what a JWS needs.
    enum Problem: Error {
        /// Not three dot-separated parts.
        case parts
        /// The header is not base64url of a flat JSON object.
        case header
        /// The claims are not base64url of a flat JSON object.
        case claims
        /// The signature is not base64url.
        case signature
    }

    static func parse(_ token: String) -> Result<CompactJWS, Problem> {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(.parts) }
        guard let headerBytes = base64URLDecode(String(parts[0])), let header = FlatJSONObject(headerBytes) else {
            return .failure(.header)
        }
        guard let claimBytes = base64URLDecode(String(parts[1])), let claims = FlatJSONObject(claimBytes) else {
            return .failure(.claims)
        }
        guard let signature = base64URLDecode(String(parts[2])) else { return .failure(.signature) }
        let signingInput = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        return .success(CompactJWS(header: header, claims: claims, signature: signature, signingInput: signingInput))
    }
}
