public import PushTLS

/// APNs provider authentication tokens: compact JWS with ES256 (see docs/providers.md A.7).
///
/// Header `{"alg":"ES256","kid":"<keyID>"}`, claims `{"iss":"<teamID>","iat":<seconds>}`,
/// signature raw r‖s, every part base64url without padding.
public enum APNsProviderToken {
    /// Builds and signs a token. `teamID` and `keyID` (10 characters at Apple) must be ASCII
    /// letters and digits, which also keeps them safe to place in JSON unescaped.
    public static func make(
        teamID: String, keyID: String, issuedAt: Int64, signer: ES256Signer
    ) throws(TLSError) -> String {
        for (label, value) in [("team ID", teamID), ("key ID", keyID)] {
            guard !value.isEmpty, value.utf8.allSatisfy(isASCIIAlphanumeric) else {
                throw TLSError(.invalidInput, "APNs \(label) must be ASCII letters and digits: \"\(value)\"")
            }
        }
        let header = base64URLEncode(Array(#"{"alg":"ES256","kid":"\#(keyID)"}"#.utf8))
        let claims = base64URLEncode(Array(#"{"iss":"\#(teamID)","iat":\#(issuedAt)}"#.utf8))
        let signingInput = header + "." + claims
        let signature = try signer.sign(Array(signingInput.utf8))
        return signingInput + "." + base64URLEncode(signature)
    }

    /// Checks a token's signature and shape; returns its key ID, team ID and issue time, or nil
    /// when the token is malformed, not ES256, lacks kid/iss/iat, or the signature is wrong.
    /// Age limits (APNs: one hour) are the caller's to apply to `issuedAt`.
    public static func verify(
        _ token: String, verifier: ES256Verifier
    ) -> (keyID: String, teamID: String, issuedAt: Int64)? {
        guard case .success(let jws) = CompactJWS.parse(token), jws.header.string("alg") == "ES256",
            let keyID = jws.header.string("kid"), let teamID = jws.claims.string("iss"),
            let issuedAt = jws.claims.integer("iat")
        else { return nil }
        guard verifier.verify(jws.signingInput, rawSignature: jws.signature) else { return nil }
        return (keyID, teamID, issuedAt)
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }
}
