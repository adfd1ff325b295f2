import Foundation
import PushCredentials
import PushTLS
import Testing

@Suite("APNs provider tokens")
struct APNsProviderTokenTests {
    @Test("a provider token parses back with its kid, iss and iat and verifies")
    func providerTokenRoundTrip() throws {
        let keys = try ES256Signer.generateP8()
        let signer = try ES256Signer(p8PEM: keys.privateKeyPEM)
        let token = try APNsProviderToken.make(
            teamID: "TEAM123456", keyID: "KEY1234567", issuedAt: 1_700_000_000, signer: signer)
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        #expect(
            String(decoding: try #require(base64URLDecode(parts[0])), as: UTF8.self)
                == #"{"alg":"ES256","kid":"KEY1234567"}"#)
        #expect(
            String(decoding: try #require(base64URLDecode(parts[1])), as: UTF8.self)
                == #"{"iss":"TEAM123456","iat":1700000000}"#)
        #expect(try #require(base64URLDecode(parts[2])).count == 64)
        #expect(!token.contains("="))

        let verifier = try ES256Verifier(publicKeyPEM: keys.publicKeyPEM)
        let claims = try #require(APNsProviderToken.verify(token, verifier: verifier))
        #expect(claims.keyID == "KEY1234567")
        #expect(claims.teamID == "TEAM123456")
        #expect(claims.issuedAt == 1_700_000_000)
    }

    @Test("tampered, re-signed-by-another-key, non-ES256 and malformed tokens fail")
    func tamperedTokens() throws {
        let keys = try ES256Signer.generateP8()
        let signer = try ES256Signer(p8PEM: keys.privateKeyPEM)
        let verifier = try ES256Verifier(publicKeyPEM: keys.publicKeyPEM)
        let token = try APNsProviderToken.make(
            teamID: "TEAM123456", keyID: "KEY1234567", issuedAt: 1_700_000_000, signer: signer)
        let parts = token.split(separator: ".").map(String.init)

        let otherClaims = base64URLEncode(Array(#"{"iss":"EVIL123456","iat":1700000000}"#.utf8))
        #expect(
            APNsProviderToken.verify([parts[0], otherClaims, parts[2]].joined(separator: "."), verifier: verifier)
                == nil)
        var signature = try #require(base64URLDecode(parts[2]))
        signature[63] ^= 0x80
        #expect(
            APNsProviderToken.verify(
                [parts[0], parts[1], base64URLEncode(signature)].joined(separator: "."), verifier: verifier) == nil)

        let otherSigner = try ES256Signer(p8PEM: ES256Signer.generateP8().privateKeyPEM)
        let forged = try APNsProviderToken.make(
            teamID: "TEAM123456", keyID: "KEY1234567", issuedAt: 1_700_000_000, signer: otherSigner)
        #expect(APNsProviderToken.verify(forged, verifier: verifier) == nil)

        // A correctly signed token that claims another algorithm is still rejected.
        let noneHeader = base64URLEncode(Array(#"{"alg":"none","kid":"KEY1234567"}"#.utf8))
        let input = noneHeader + "." + parts[1]
        let resigned = input + "." + base64URLEncode(try signer.sign(Array(input.utf8)))
        #expect(APNsProviderToken.verify(resigned, verifier: verifier) == nil)

        for malformed in ["", "a.b", "a.b.c.d", parts[0] + "." + parts[1] + ".", token + "="] {
            #expect(APNsProviderToken.verify(malformed, verifier: verifier) == nil, "\(malformed)")
        }
    }

    @Test("IDs that could break the JSON are refused")
    func refusesOddIDs() throws {
        let signer = try ES256Signer(p8PEM: ES256Signer.generateP8().privateKeyPEM)
        let error = try #require(throws: TLSError.self) {
            try APNsProviderToken.make(teamID: #"TEAM","x":"1"#, keyID: "KEY1234567", issuedAt: 0, signer: signer)
        }
        #expect(error.kind == .invalidInput)
    }
}

@Suite("Provider tokens from other producers")
struct ForeignTokenTests {
    @Test("a token with typ, whitespace and escapes, signed elsewhere in the same format, verifies")
    func foreignToken() throws {
        let keys = try ES256Signer.generateP8()
        let signer = try ES256Signer(p8PEM: keys.privateKeyPEM)
        let header = base64URLEncode(Array(#"{ "typ" : "JWT", "alg":"ES256", "kid":"K\u0045Y1234567" }"#.utf8))
        let claims = base64URLEncode(Array(#"{"iat": 1700000001, "iss":"TEAM123456", "extra": null}"#.utf8))
        let input = header + "." + claims
        let token = input + "." + base64URLEncode(try signer.sign(Array(input.utf8)))
        let parsed = try #require(
            APNsProviderToken.verify(token, verifier: ES256Verifier(publicKeyPEM: keys.publicKeyPEM)))
        #expect(parsed.keyID == "KEY1234567")
        #expect(parsed.teamID == "TEAM123456")
        #expect(parsed.issuedAt == 1_700_000_001)
    }

    @Test(
        "duplicate or non-integer claims are rejected",
        arguments: [
            #"{"iss":"TEAM123456","iat":1.5}"#,
            #"{"iss":"TEAM123456","iat":"1700000000"}"#,
            #"{"iss":"TEAM123456","iss":"OTHER","iat":1}"#,
            #"{"iss":"TEAM123456","iat":1} x"#,
            #"{"iss":{"nested":1},"iat":1}"#,
        ])
    func oddClaims(json: String) throws {
        let keys = try ES256Signer.generateP8()
        let signer = try ES256Signer(p8PEM: keys.privateKeyPEM)
        let input =
            base64URLEncode(Array(#"{"alg":"ES256","kid":"KEY1234567"}"#.utf8)) + "."
            + base64URLEncode(Array(json.utf8))
        let token = input + "." + base64URLEncode(try signer.sign(Array(input.utf8)))
        #expect(APNsProviderToken.verify(token, verifier: try ES256Verifier(publicKeyPEM: keys.publicKeyPEM)) == nil)
    }
}
