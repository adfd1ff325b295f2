import PushCore
import PushMockSupport
import PushMockTesting
import PushMockWebPush
import PushTLS
import Testing

@Suite("Mock Web Push: pushes", .timeLimit(.minutes(1)))
struct PushTests {
    @Test("an encrypted push with a valid VAPID token: 201, Location, TTL echoed, the plaintext recorded")
    func delivered() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let vapid = try harness.authorization(try harness.jwt())
        let request = try harness.push(
            "Guten Tag", headers: [("urgency", "high"), ("topic", "news-1"), ("ttl", "3600"), ("authorization", vapid)])
        let response = try client.send(request)
        #expect(response.status == 201, "\(response.text)")
        #expect(response.body.isEmpty)
        #expect(response.header("ttl") == "3600")
        let location = try #require(response.header("location"))
        #expect(location.hasPrefix("\(harness.origin)/m/"))
        #expect(try client.send(harness.push("again", headers: [("authorization", vapid)])).status == 201)
        #expect(try client.send(harness.push("new token")).status == 201)

        let stats = harness.server.stats
        #expect(stats.delivered == 3 && stats.decrypted == 3 && stats.pushRequests == 3)
        #expect(stats.vapidTokensByAudience == [harness.origin: 2], "two distinct tokens")
        let message = try #require(stats.recentMessages.first)
        #expect(message.plaintextString == "Guten Tag")
        #expect(message.subscriptionID == "alice")
        #expect(location.hasSuffix("/m/\(message.messageID)"))
        #expect(message.ttl == 3600 && message.urgency == "high" && message.topic == "news-1")
        #expect(message.vapidAudience == harness.origin && message.vapidSubject == "mailto:ops@example.com")
        #expect(message.body == request.body)
    }

    @Test("TTL over 30 days is capped and the cap echoed; a push without a body needs no Content-Encoding")
    func ttlCapAndEmptyBody() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(
            try harness.push(body: [], headers: [("ttl", "99999999"), ("content-encoding", nil)]))
        #expect(response.status == 201, "\(response.text)")
        #expect(response.header("ttl") == "2592000")
        #expect(harness.server.stats.recentMessages.first?.plaintext == nil)
        #expect(harness.server.stats.decrypted == 0)
    }

    @Test("each refusal with autopush's status, errno and the mock's error key")
    func refusals() throws {
        let harness = try Harness { $0.gonePrefix = "gone-" }
        defer { harness.shutdown() }
        let client = try harness.client()
        let now = wallClockSeconds()
        let otherKey = try ES256Signer(p8PEM: try ES256Signer.generateP8().privateKeyPEM)
        let bob = try harness.server.subscription(id: "bob")
        let cases: [(String, H2Request, Int, Int?, String)] = [
            ("no TTL", try harness.push(headers: [("ttl", nil)]), 400, 111, "NoTTL"),
            ("TTL not a number", try harness.push(headers: [("ttl", "soon")]), 400, 111, "NoTTL"),
            ("negative TTL", try harness.push(headers: [("ttl", "-1")]), 400, 114, "InvalidTTL"),
            ("bad urgency", try harness.push(headers: [("urgency", "urgent")]), 400, nil, "InvalidUrgency"),
            (
                "long topic", try harness.push(headers: [("topic", String(repeating: "t", count: 33))]), 400, 113,
                "InvalidTopic"
            ),
            ("topic alphabet", try harness.push(headers: [("topic", "a+b")]), 400, 113, "InvalidTopic"),
            ("no encoding", try harness.push(headers: [("content-encoding", nil)]), 400, 110, "InvalidEncryption"),
            ("aesgcm", try harness.push(headers: [("content-encoding", "aesgcm")]), 400, 110, "InvalidEncryption"),
            ("4097 bytes", try harness.push(body: [UInt8](repeating: 1, count: 4097)), 413, 104, "PayloadTooLarge"),
            ("no VAPID", try harness.push(headers: [("authorization", nil)]), 401, 109, "VapidMissing"),
            (
                "bearer", try harness.push(headers: [("authorization", "Bearer abc")]), 401, 109,
                "VapidUnknownScheme"
            ),
            (
                "expired",
                try harness.push(headers: [("authorization", try harness.authorization(try harness.jwt(exp: now - 5)))]
                ),
                401, 109, "VapidExpired"
            ),
            (
                "over 24 h",
                try harness.push(headers: [
                    ("authorization", try harness.authorization(try harness.jwt(exp: now + 86_400 + 120)))
                ]), 401, 109, "VapidExpiryTooFar"
            ),
            (
                "wrong aud",
                try harness.push(headers: [
                    ("authorization", try harness.authorization(try harness.jwt(aud: "https://push.example.net")))
                ]), 401, 109, "VapidInvalidAudience"
            ),
            (
                "bad signature",
                try harness.push(headers: [
                    ("authorization", try harness.authorization(try harness.jwt(signer: otherKey)))
                ]),
                401, 109, "VapidBadSignature"
            ),
            (
                "alg none",
                try harness.push(headers: [
                    ("authorization", try harness.authorization(try harness.jwt(header: #"{"alg":"none"}"#)))
                ]), 401, 109, "VapidInvalidToken"
            ),
            (
                "no sub",
                try harness.push(headers: [("authorization", try harness.authorization(try harness.jwt(sub: nil)))]),
                401, 109, "VapidBadSubject"
            ),
            (
                "undecryptable", try harness.push(body: try Harness.encrypt("for bob", for: bob)), 400, 110,
                "DecryptionFailed"
            ),
            ("gone", try harness.push(to: "gone-1"), 410, 106, "NoSubscription"),
            ("bad id", H2Request(path: "/wpush/v2/a.b", headers: [("ttl", "0")]), 404, 102, "InvalidToken"),
            ("other path", H2Request(path: "/push/alice"), 404, 102, "InvalidToken"),
        ]
        for (name, request, status, errno, error) in cases {
            let response = try client.send(request)
            #expect(response.status == status, "\(name): \(response.text)")
            #expect(response.errno == errno, "\(name)")
            #expect(response.json?["code"] == .number(String(status)), "\(name)")
            #expect(response.message?.isEmpty == false, "\(name)")
            #expect(response.header("content-type") == "application/json", "\(name)")
            #expect(harness.server.stats.count(error: error) >= 1, "\(name): \(error)")
        }
        let gone = try client.send(try harness.push(to: "gone-2"))
        #expect(gone.header("cache-control") == "max-age=86400")
        let undecryptable = try client.send(try harness.push(body: try Harness.encrypt("x", for: bob)))
        #expect(undecryptable.message?.contains("AES-GCM tag") == true, "\(undecryptable.text)")
        #expect(harness.server.stats.delivered == 0)
    }

    @Test("--not-found-prefix: 404; rate limit every N: 429 with Retry-After; faults only after the checks")
    func prefixesAndFaults() throws {
        let harness = try Harness {
            $0.notFoundPrefix = "nf-"
            $0.notFoundIDs = ["listed-missing"]
            $0.goneIDs = ["listed-gone"]
            $0.rateLimitEvery = 3
            $0.retryAfterSeconds = 7
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let missing = try client.send(try harness.push(to: "nf-1"))
        #expect(missing.status == 404 && missing.errno == 102)
        #expect(try client.send(try harness.push(to: "listed-missing")).status == 404, "--not-found FILE")
        #expect(try client.send(try harness.push(to: "listed-gone")).status == 410, "--gone FILE")
        #expect(try client.send(try harness.push(headers: [("ttl", nil)])).status == 400, "not counted for faults")
        let statuses = try (0..<6).map { _ in try client.send(try harness.push()) }
        #expect(statuses.map(\.status) == [201, 201, 429, 201, 201, 429])
        #expect(statuses[2].header("retry-after") == "7")
        #expect(harness.server.stats.count(error: "TooManyRequests") == 2)
    }

    @Test("decryptEvery 0: pushes accepted unread, VAPID still checked")
    func noDecryption() throws {
        let harness = try Harness { $0.decryptEvery = 0 }
        defer { harness.shutdown() }
        let client = try harness.client()
        #expect(try client.send(try harness.push(body: [UInt8](repeating: 9, count: 200))).status == 201)
        #expect(try client.send(try harness.push(headers: [("authorization", nil)])).status == 401)
        let stats = harness.server.stats
        #expect(stats.delivered == 1 && stats.decrypted == 0)
        #expect(stats.recentMessages.first?.plaintext == nil)
    }
}
