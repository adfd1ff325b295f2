import Foundation
import PushCredentials
import PushTLS
import Testing

/// A JWT with any header and claims (JSON text as given), signed RS256 with `signer`.
func handMadeJWT(header: String, claims: String, signer: RSASigner) throws -> String {
    let input = base64URLEncode(Array(header.utf8)) + "." + base64URLEncode(Array(claims.utf8))
    return input + "." + base64URLEncode(try signer.sign(Array(input.utf8)))
}

@Suite("OAuth2 JWT-bearer assertions")
struct OAuthAssertionTests {
    let account: GoogleServiceAccount
    let signer: RSASigner
    let verifier: RSAVerifier
    let audience = "https://oauth2.googleapis.com/token"
    let now: Int64 = 1_700_000_000

    init() throws {
        account = try GoogleServiceAccount(json: serviceAccountJSON())
        signer = try account.signer()
        verifier = try account.verifier()
    }

    @Test("make writes Google's header and claims, and verify returns them")
    func roundTrip() throws {
        let jwt = try OAuthAssertion.make(account: account, audience: audience, issuedAt: now, signer: signer)
        let parts = jwt.split(separator: ".").map { Data(base64URLDecode(String($0))!) }
        try #require(parts.count == 3)
        let header = try #require(try JSONSerialization.jsonObject(with: parts[0]) as? [String: String])
        #expect(header == ["alg": "RS256", "typ": "JWT", "kid": "0123abcd"])
        let claims = try #require(try JSONSerialization.jsonObject(with: parts[1]) as? [String: Any])
        #expect(claims["iss"] as? String == account.clientEmail)
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["aud"] as? String == audience)
        #expect(claims["iat"] as? Int == Int(now))
        #expect(claims["exp"] as? Int == Int(now) + 3600)
        #expect(claims.count == 5)

        let verified = try OAuthAssertion.verify(jwt, verifier: verifier, now: now + 10).get()
        #expect(
            verified
                == OAuthAssertion.Claims(
                    issuer: account.clientEmail, scope: OAuthAssertion.firebaseMessagingScope, audience: audience,
                    issuedAt: now, expiresAt: now + 3600))
    }

    @Test("a custom scope and lifetime; lifetimes outside 1…3600 are refused by make")
    func scopeAndLifetime() throws {
        let scope = "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/firebase.messaging"
        let jwt = try OAuthAssertion.make(
            account: account, audience: audience, scope: scope, issuedAt: now, lifetime: 60, signer: signer)
        let claims = try OAuthAssertion.verify(jwt, verifier: verifier, now: now).get()
        #expect(claims.expiresAt == now + 60)
        #expect(claims.scopes == scope.split(separator: " ").map(String.init))
        for lifetime: Int64 in [0, -1, 3601] {
            #expect(throws: TLSError.self) {
                try OAuthAssertion.make(
                    account: account, audience: audience, issuedAt: now, lifetime: lifetime, signer: signer)
            }
        }
    }

    @Test("another key's signature, and tampered claims, are bad signatures")
    func badSignature() throws {
        let otherAccount = try GoogleServiceAccount(json: serviceAccountJSON(key: RSAKeyPair.generate().privateKeyPEM))
        let forged = try OAuthAssertion.make(
            account: otherAccount, audience: audience, issuedAt: now, signer: otherAccount.signer())
        #expect(OAuthAssertion.verify(forged, verifier: verifier, now: now) == .failure(.badSignature))

        let jwt = try OAuthAssertion.make(account: account, audience: audience, issuedAt: now, signer: signer)
        let parts = jwt.split(separator: ".").map(String.init)
        let evilClaims = base64URLEncode(
            Array(#"{"iss":"x@y.z","scope":"s","aud":"a","iat":1700000000,"exp":1700003600}"#.utf8))
        let tampered = parts[0] + "." + evilClaims + "." + parts[2]
        #expect(OAuthAssertion.verify(tampered, verifier: verifier, now: now) == .failure(.badSignature))
    }

    @Test("times: expired, too long, not after iat, issued in the future beyond 60 s skew")
    func times() throws {
        func check(iat: Int64, exp: Int64) throws -> Result<OAuthAssertion.Claims, OAuthAssertion.AssertionError> {
            let jwt = try handMadeJWT(
                header: #"{"alg":"RS256","typ":"JWT"}"#,
                claims: #"{"iss":"a@b.c","scope":"s","aud":"u","iat":\#(iat),"exp":\#(exp)}"#, signer: signer)
            return OAuthAssertion.verify(jwt, verifier: verifier, now: now)
        }
        #expect(try check(iat: now - 3600, exp: now) == .failure(.expired(expiresAt: now, now: now)))
        #expect(try check(iat: now - 3599, exp: now + 1).map(\.issuedAt) == .success(now - 3599))
        #expect(try check(iat: now, exp: now + 3601) == .failure(.badLifetime(issuedAt: now, expiresAt: now + 3601)))
        #expect(try check(iat: now, exp: now) == .failure(.badLifetime(issuedAt: now, expiresAt: now)))
        #expect(try check(iat: now + 61, exp: now + 100) == .failure(.issuedInFuture(issuedAt: now + 61, now: now)))
        #expect(try check(iat: now + 60, exp: now + 100).map(\.issuedAt) == .success(now + 60), "within the skew")
    }

    @Test("alg other than RS256 is refused even with a valid RS256 signature")
    func algorithm() throws {
        let claims = #"{"iss":"a@b.c","scope":"s","aud":"u","iat":\#(now),"exp":\#(now + 60)}"#
        for alg in ["none", "HS256", "RS512", "ES256"] {
            let jwt = try handMadeJWT(header: #"{"alg":"\#(alg)"}"#, claims: claims, signer: signer)
            #expect(OAuthAssertion.verify(jwt, verifier: verifier, now: now) == .failure(.unsupportedAlgorithm(alg)))
        }
        let noAlg = try handMadeJWT(header: #"{"typ":"JWT"}"#, claims: claims, signer: signer)
        #expect(OAuthAssertion.verify(noAlg, verifier: verifier, now: now) == .failure(.malformed("alg is missing")))
    }

    @Test("bad shapes and missing or mistyped claims are malformed, each named")
    func malformed() throws {
        let header = #"{"alg":"RS256"}"#
        let cases: [(String, String)] = [
            (#"{"scope":"s","aud":"u","iat":1,"exp":2}"#, "iss is missing or not a string"),
            (#"{"iss":"a","scope":"s","aud":"u","iat":"1","exp":2}"#, "iat is missing or not an integer"),
            (#"{"iss":"a","scope":"s","aud":"u","iat":1}"#, "exp is missing or not an integer"),
            (
                #"{"iss":"a","scope":["s"],"aud":"u","iat":1,"exp":2}"#,
                "the claim set is not base64url of a JSON object"
            ),
        ]
        for (claims, reason) in cases {
            let jwt = try handMadeJWT(header: header, claims: claims, signer: signer)
            #expect(OAuthAssertion.verify(jwt, verifier: verifier, now: now) == .failure(.malformed(reason)))
        }
        for jwt in ["", "a.b", "a.b.c.d", "!!.e30.c2ln", "e30.e30.c2ln=", "W10.e30.c2ln"] {
            guard case .failure(.malformed) = OAuthAssertion.verify(jwt, verifier: verifier, now: now) else {
                Issue.record("\(jwt) should be malformed")
                continue
            }
        }
    }

    @Test("a client_email that needs JSON escaping survives")
    func escaping() throws {
        let odd = try GoogleServiceAccount(
            projectID: "p", privateKeyID: "id\"\\", privateKey: sharedRSAKeys.privateKeyPEM,
            clientEmail: "we\"ird\u{1}@é.example", tokenURI: "https://t.example/token")
        let jwt = try OAuthAssertion.make(account: odd, audience: "aud\n", issuedAt: now, signer: signer)
        let claims = try OAuthAssertion.verify(jwt, verifier: verifier, now: now).get()
        #expect(claims.issuer == "we\"ird\u{1}@é.example")
        #expect(claims.audience == "aud\n")
    }
}
