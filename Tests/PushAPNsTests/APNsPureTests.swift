import PushCore
import PushCredentials
import PushDelivery
import PushHTTP2
import PushPosix
import PushSync
import PushTLS
import PushTransport
import Testing

@testable import PushAPNs

@Suite("APNs endpoint, retry policy, responses")
struct APNsPureTests {
    @Test("endpoint URLs")
    func endpoints() {
        #expect(HTTPSOrigin(url: "https://127.0.0.1:8443") == HTTPSOrigin(host: "127.0.0.1", port: 8443))
        #expect(HTTPSOrigin(url: "https://api.push.apple.com/") == .apnsProduction)
        #expect(HTTPSOrigin(url: "https://[::1]:9000") == HTTPSOrigin(host: "::1", port: 9000))
        #expect(HTTPSOrigin(url: "http://x") == nil)
        #expect(HTTPSOrigin(url: "https://x:0") == nil)
        #expect(HTTPSOrigin(url: "https://x/3/device") == nil)
        #expect(HTTPSOrigin.apnsProduction.authority == "api.push.apple.com")
        #expect(HTTPSOrigin(host: "127.0.0.1", port: 8443).authority == "127.0.0.1:8443")
    }

    @Test("backoff doubles, is capped, and jitters within [½, 1]")
    func backoff() {
        let policy = RetryPolicy(maxAttempts: 5, initialBackoff: .milliseconds(100), maxBackoff: .seconds(1))
        #expect(policy.backoff(afterAttempt: 1, unit: 0.999) <= .milliseconds(100))
        #expect(policy.backoff(afterAttempt: 1, unit: 0) == .milliseconds(50))
        #expect(policy.backoff(afterAttempt: 2, unit: 0) == .milliseconds(100))
        #expect(policy.backoff(afterAttempt: 10, unit: 0.999) <= .seconds(1))
        #expect(policy.backoff(afterAttempt: 10, unit: 0) == .milliseconds(500))
    }

    func outcome(_ status: Int, _ body: String, apnsID: String = "") -> ProviderOutcome {
        APNsDialect(credentials: .certificate).outcome(
            of: ProviderResponse(status: status, id: apnsID, body: Array(body.utf8)), token: "t", now: 0)
    }

    @Test("responses become outcomes: delivered, rejected with reason, transient")
    func outcomes() {
        let backoff = ProviderRetry.afterBackoff(notBefore: nil)
        #expect(outcome(200, "", apnsID: "x") == .delivered(id: "x"))
        #expect(
            outcome(400, #"{"reason":"BadDeviceToken"}"#)
                == .rejected(reason: "BadDeviceToken", httpStatus: 400, unregisteredAt: 0, invalidatesToken: true))
        #expect(
            outcome(403, #"{"reason":"InvalidProviderToken"}"#)
                == .rejected(
                    reason: "InvalidProviderToken", httpStatus: 403, unregisteredAt: 0, invalidatesToken: false,
                    code: .credentialsRefused))
        #expect(
            outcome(400, #"{"reason":"BadTopic"}"#)
                == .rejected(reason: "BadTopic", httpStatus: 400, unregisteredAt: 0, invalidatesToken: false))
        #expect(
            outcome(410, #"{"reason":"Unregistered","timestamp":1700000000123}"#)
                == .rejected(
                    reason: "Unregistered", httpStatus: 410, unregisteredAt: 1_700_000_000_123, invalidatesToken: true))
        #expect(
            outcome(503, #"{"reason":"ServiceUnavailable"}"#)
                == .transient(reason: "ServiceUnavailable", httpStatus: 503, retry: backoff))
        #expect(
            outcome(503, #"{"reason":"Shutdown"}"#)
                == .transient(reason: "Shutdown", httpStatus: 503, retry: .onNewConnection))
        #expect(
            outcome(429, #"{"reason":"TooManyRequests"}"#)
                == .transient(reason: "TooManyRequests", httpStatus: 429, retry: backoff))
        #expect(
            outcome(403, #"{"reason":"ExpiredProviderToken"}"#)
                == .transient(reason: "ExpiredProviderToken", httpStatus: 403, retry: .afterRenewingAuthorization))
        #expect(
            outcome(429, #"{"reason":"TooManyProviderTokenUpdates"}"#)
                == .transient(reason: "TooManyProviderTokenUpdates", httpStatus: 429, retry: backoff))
        #expect(outcome(500, "garbage") == .transient(reason: "HTTP 500", httpStatus: 500, retry: backoff))
        #expect(
            outcome(400, #"{"reason":"SomethingNew"}"#)
                == .rejected(reason: "SomethingNew", httpStatus: 400, unregisteredAt: 0, invalidatesToken: false))
        #expect(
            outcome(502, #"{"reason":"SomethingNew"}"#)
                == .transient(reason: "SomethingNew", httpStatus: 502, retry: backoff))
    }

    @Test("the provider token is signed once per 50 minutes and renewed on ExpiredProviderToken only after 20")
    func providerToken() throws {
        let key = try ES256Signer.generateP8()
        let now = Locked<Int64>(1_700_000_000)
        let cache = ProviderTokenCache(
            teamID: "TEAM123456", keyID: "KEY1234567", signer: try ES256Signer(p8PEM: key.privateKeyPEM),
            clock: { now.withLock { $0 } })
        let first = try cache.current()
        for _ in 0..<1000 { _ = try cache.current() }
        #expect(cache.signings == 1)
        now.withLock { $0 += 10 * 60 }
        cache.reportExpired(issuedAt: first.issuedAt)
        #expect(try cache.current().token == first.token, "no renewal within 20 minutes, even when told it expired")
        now.withLock { $0 += 15 * 60 }
        cache.reportExpired(issuedAt: first.issuedAt)
        let renewed = try cache.current()
        #expect(renewed.token != first.token)
        #expect(cache.signings == 2)
        now.withLock { $0 += 50 * 60 }
        _ = try cache.current()
        #expect(cache.signings == 3, "renewed after 50 minutes")
        let verifier = try ES256Verifier(publicKeyPEM: key.publicKeyPEM)
        let claims = try #require(APNsProviderToken.verify(renewed.token, verifier: verifier))
        #expect(claims.keyID == "KEY1234567")
        #expect(claims.teamID == "TEAM123456")
        #expect(claims.issuedAt == renewed.issuedAt)
    }

    @Test("request queue keeps order, prepends, and survives many pops")
    func queue() {
        let collector = DeliveryCollector(placeholders: [])
        let job = APNsJob(
            PreparedNotification(
                payload: [], pushType: .alert, topic: "t", priority: 10, expiration: nil, collapseID: nil, apnsID: nil,
                tokens: []), notificationIndex: 0, authority: "a", usesProviderToken: true, collector: collector)
        var queue = RequestQueue<ProviderRequest>()
        queue.append(contentsOf: (0..<10_000).map { ProviderRequest(job: job, token: "\($0)", slot: $0) })
        var popped: [Int] = []
        while let request = queue.popFirst() {
            popped.append(request.slot)
            if request.slot == 5000 { queue.prepend(ProviderRequest(job: job, token: "again", slot: -1)) }
        }
        #expect(popped.count == 10_001)
        #expect(popped[5001] == -1)
        #expect(Array(popped.prefix(5001)) == Array(0...5000))
    }

    @Test("the header list puts pseudo-headers first and only :path and authorization vary")
    func jobHeaders() {
        let collector = DeliveryCollector(placeholders: [])
        let job = APNsJob(
            PreparedNotification(
                payload: Array("{}".utf8), pushType: .voip, topic: "com.x.voip", priority: 10, expiration: 0,
                collapseID: "c", apnsID: "123e4567-e89b-12d3-a456-426614174000", tokens: []),
            notificationIndex: 0, authority: "api.push.apple.com", usesProviderToken: true, collector: collector)
        let headers = job.headers(token: "abcd", authorization: Array("bearer x".utf8))
        #expect(
            headers.map(\.nameString) == [
                ":method", ":scheme", ":authority", ":path", "authorization", "apns-topic", "apns-push-type",
                "apns-priority",
                "apns-expiration", "apns-collapse-id", "apns-id",
            ])
        #expect(headers[3].valueString == "/3/device/abcd")
        #expect(headers[4].valueString == "bearer x")
        #expect(headers[6].valueString == "voip")
        #expect(!headers[3].indexable && !headers[4].indexable)
    }
}
