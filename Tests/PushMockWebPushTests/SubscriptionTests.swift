import PushCore
import PushMockTesting
import PushMockWebPush
import PushTLS
import Testing

@Suite("Mock Web Push: subscriptions", .timeLimit(.minutes(1)))
struct SubscriptionTests {
    @Test("derived from (seed, id): stable for one seed, different across seeds and ids")
    func derivation() throws {
        let first = try Harness()
        defer { first.shutdown() }
        let again = try Harness()
        defer { again.shutdown() }
        let other = try Harness(seed: [UInt8](repeating: 7, count: 32))
        defer { other.shutdown() }
        let a = try first.server.subscription(id: "alice", host: "localhost:1")
        #expect(a == (try again.server.subscription(id: "alice", host: "localhost:1")))
        let b = try other.server.subscription(id: "alice", host: "localhost:1")
        #expect(a.p256dh != b.p256dh && a.auth != b.auth)
        #expect(a.p256dh != (try first.server.subscription(id: "bob")).p256dh)
        #expect(a.endpoint == "https://localhost:1/wpush/v2/alice")
        #expect(a.p256dh.count == 65 && a.auth.count == 16 && a.privateKey.count == 32)
        #expect(P256KeyAgreementKey.keyPair(privateScalar: a.privateKey)?.publicPoint == a.p256dh)
        #expect(
            String(decoding: a.browserJSON, as: UTF8.self)
                == #"{"endpoint":"https://localhost:1/wpush/v2/alice","expirationTime":null,"keys":{"p256dh":"\#(base64URLEncode(a.p256dh))","auth":"\#(base64URLEncode(a.auth))"}}"#
        )
        #expect(throws: InvalidSubscriptionID.self) { try first.server.subscription(id: "a/b") }
        #expect(throws: InvalidSubscriptionID.self) {
            try first.server.subscription(id: String(repeating: "x", count: 129))
        }
    }

    @Test("POST /_mock/subscriptions: count, prefix and host; private_key decrypts; bad requests are 400")
    func mockDoor() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(
            H2Request(
                path: "/_mock/subscriptions", headers: [("content-type", "application/json")],
                body: Array(#"{"count":3,"prefix":"gone-","host":"localhost:9"}"#.utf8)))
        #expect(response.status == 200)
        guard case .array(let items)? = response.json else {
            Issue.record("not an array: \(response.text)")
            return
        }
        #expect(items.count == 3)
        #expect(items.map { $0["endpoint"] } == (1...3).map { .string("https://localhost:9/wpush/v2/gone-s\($0)") })
        let expected = try harness.server.subscription(id: "gone-s2", host: "localhost:9")
        #expect(items[1]["keys"]?["p256dh"] == .string(base64URLEncode(expected.p256dh)))
        #expect(items[1]["keys"]?["auth"] == .string(base64URLEncode(expected.auth)))
        #expect(items[1]["private_key"] == .string(base64URLEncode(expected.privateKey)))
        #expect(items[1]["expirationTime"] == .null)

        // Defaults: one, no prefix, the request's authority; numbering goes on.
        let one = try client.send(H2Request(path: "/_mock/subscriptions"))
        guard case .array(let single)? = one.json else { throw ClientError("not an array: \(one.text)") }
        #expect(single.map { $0["endpoint"] } == [.string("\(harness.origin)/wpush/v2/s4")])
        #expect(harness.server.stats.subscriptionsIssued == 4)

        for body in [#"{"count":0}"#, #"{"count":100001}"#, #"{"prefix":"a/b"}"#, #"{"host":"x/y"}"#, "[1]"] {
            let refused = try client.send(H2Request(path: "/_mock/subscriptions", body: Array(body.utf8)))
            #expect(refused.status == 400, "\(body)")
            #expect(refused.message?.isEmpty == false)
        }
    }
}
