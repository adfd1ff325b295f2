import PushCredentials
import PushSync
import PushTLS
import Testing

@Suite("VAPID tokens")
struct VAPIDTokenTests {
    static let keys = try! ES256Signer.generateP8()
    static let signer = try! ES256Signer(p8PEM: keys.privateKeyPEM)

    @Test("a VAPID JWT has RFC 8292's header and claims and OpenSSL verifies its signature")
    func tokenShapeAndSignature() throws {
        let token = try VAPIDToken.make(
            audience: "https://updates.push.services.mozilla.com", subject: "mailto:push@example.com",
            expiresAt: 1_700_043_200, signer: Self.signer)
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        #expect(
            String(decoding: try #require(base64URLDecode(parts[0])), as: UTF8.self) == #"{"typ":"JWT","alg":"ES256"}"#)
        #expect(
            String(decoding: try #require(base64URLDecode(parts[1])), as: UTF8.self)
                == #"{"aud":"https://updates.push.services.mozilla.com","exp":1700043200,"sub":"mailto:push@example.com"}"#
        )
        #expect(try #require(base64URLDecode(parts[2])).count == 64)
        // The public key as OpenSSL writes it from the private key, not our raw point.
        let verifier = try ES256Verifier(publicKeyPEM: Self.keys.publicKeyPEM)
        let claims = try VAPIDToken.verify(token, verifier: verifier).get()
        #expect(claims.audience == "https://updates.push.services.mozilla.com")
        #expect(claims.expiresAt == 1_700_043_200)
        #expect(claims.subject == "mailto:push@example.com")
        let other = try ES256Verifier(publicKeyPEM: try ES256Signer.generateP8().publicKeyPEM)
        #expect(VAPIDToken.verify(token, verifier: other) == .failure(.badSignature))
        var parts2 = parts
        parts2[1] = base64URLEncode(Array(#"{"aud":"https://evil.example","exp":1700043200}"#.utf8))
        #expect(
            VAPIDToken.verify(parts2.joined(separator: "."), verifier: verifier) == .failure(.badSignature),
            "claims changed")
        #expect(VAPIDToken.verify("a.b", verifier: verifier) == .failure(.malformed))
    }

    @Test func subjects() {
        #expect(VAPIDToken.isValidSubject("mailto:push@example.com"))
        #expect(VAPIDToken.isValidSubject("https://example.com/contact"))
        #expect(!VAPIDToken.isValidSubject(""))
        #expect(!VAPIDToken.isValidSubject("mailto:"))
        #expect(!VAPIDToken.isValidSubject("mailto: <push@example.com>"), "Apple refuses spaces and brackets")
        #expect(!VAPIDToken.isValidSubject("push@example.com"))
        #expect(!VAPIDToken.isValidSubject("http://example.com"))
    }

    @Test("one token per origin, shared, renewed after 6 hours, replaced after a refusal only if 10 minutes old")
    func cachePerOrigin() throws {
        let now = Locked<Int64>(1_700_000_000)
        let cache = try VAPIDTokenCache(signer: Self.signer, subject: "mailto:a@example.com") { now.withLock { $0 } }
        #expect(cache.publicKey == base64URLEncode(try Self.signer.publicPoint()))
        let mozilla = try cache.authorization(audience: "https://updates.push.services.mozilla.com")
        #expect(try cache.authorization(audience: "https://updates.push.services.mozilla.com") == mozilla)
        let google = try cache.authorization(audience: "https://fcm.googleapis.com")
        #expect(google != mozilla)
        #expect(cache.signings == 2)
        let text = String(decoding: mozilla, as: UTF8.self)
        #expect(text.hasPrefix("vapid t=") && text.hasSuffix(", k=" + cache.publicKey))
        let jwt = String(text.dropFirst("vapid t=".count).prefix { $0 != "," })
        let claims = try VAPIDToken.verify(jwt, verifier: ES256Verifier(publicKeyPEM: Self.keys.publicKeyPEM)).get()
        #expect(claims.expiresAt == 1_700_000_000 + VAPIDTokenCache.lifetime)
        #expect(VAPIDTokenCache.lifetime <= 24 * 3600)

        cache.reportRejected(audience: "https://fcm.googleapis.com")
        #expect(try cache.authorization(audience: "https://fcm.googleapis.com") == google, "too young to replace")
        now.withLock { $0 += VAPIDTokenCache.minimumAgeToReplace }
        cache.reportRejected(audience: "https://fcm.googleapis.com")
        #expect(try cache.authorization(audience: "https://fcm.googleapis.com") != google)
        #expect(cache.signings == 3)

        now.withLock { $0 += VAPIDTokenCache.renewAfter }
        #expect(try cache.authorization(audience: "https://updates.push.services.mozilla.com") != mozilla)
        #expect(cache.signings == 4)
    }
}
