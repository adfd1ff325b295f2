import PushCore
import PushHTTP2
import PushMockAPNs
import Testing

@Suite("Mock APNs responses and validation", .timeLimit(.minutes(1)))
struct ResponseShapeTests {
    @Test("a valid request gets exactly one HEADERS frame with END_STREAM and the echoed apns-id")
    func successShape() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let id = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
        let response = try client.send(.push(extra: [("apns-id", id), ("apns-push-type", "alert")]))
        #expect(response.status == 200)
        #expect(response.headerBlocks == 1)
        #expect(response.headersEndStream)
        #expect(response.dataChunks.isEmpty)
        #expect(!response.dataEndStream, "no DATA frame at all, not even an empty one")
        #expect(response.header("apns-id") == id)
        #expect(response.header("content-type") == nil)
        #expect(response.headers.count == 2)
    }

    @Test("without apns-id the mock answers with a generated lowercase UUID v4")
    func generatedID() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let responses = try client.send([.push(), .push()])
        let ids = responses.compactMap { $0.header("apns-id") }
        #expect(ids.count == 2)
        #expect(ids[0] != ids[1])
        for id in ids {
            #expect(APNsID(id)?.uuidString == id, "lowercase canonical UUID")
            let characters = Array(id)
            #expect(characters[14] == "4", "version 4")
            #expect("89ab".contains(characters[19]), "RFC 4122 variant")
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: TestRequest
        let status: Int
        let reason: String
        var testDescription: String { name }
    }

    static let longCollapseID = String(repeating: "c", count: 65)

    static let cases: [Case] = [
        Case(name: "GET", request: .push(method: "GET", body: nil), status: 405, reason: "MethodNotAllowed"),
        Case(name: "wrong path", request: .push(path: "/3/devices/\(sampleToken)"), status: 404, reason: "BadPath"),
        Case(name: "no token", request: .push(path: "/3/device/"), status: 400, reason: "MissingDeviceToken"),
        Case(
            name: "token not hex", request: .push(token: String(repeating: "zz", count: 32)), status: 400,
            reason: "BadDeviceToken"),
        Case(name: "token too short", request: .push(token: "abcd"), status: 400, reason: "BadDeviceToken"),
        Case(
            name: "header twice", request: .push(extra: [("apns-priority", "10"), ("apns-priority", "5")]),
            status: 400, reason: "DuplicateHeaders"),
        Case(
            name: "unknown header twice", request: .push(extra: [("x-trace", "1"), ("x-trace", "2")]),
            status: 400, reason: "DuplicateHeaders"),
        Case(name: "no topic", request: .push(topic: nil), status: 400, reason: "MissingTopic"),
        Case(name: "topic with a space", request: .push(topic: "com.example app"), status: 400, reason: "BadTopic"),
        Case(
            name: "unknown push type", request: .push(extra: [("apns-push-type", "sms")]), status: 400,
            reason: "InvalidPushType"),
        Case(
            name: "voip to the bare bundle id", request: .push(extra: [("apns-push-type", "voip")]),
            status: 400, reason: "DeviceTokenNotForTopic"),
        Case(
            name: "alert to the voip topic",
            request: .push(topic: "com.example.app.voip", extra: [("apns-push-type", "alert")]),
            status: 400, reason: "TopicDisallowed"),
        Case(name: "priority 7", request: .push(extra: [("apns-priority", "7")]), status: 400, reason: "BadPriority"),
        Case(
            name: "background at priority 10",
            request: .push(extra: [("apns-push-type", "background"), ("apns-priority", "10")]),
            status: 400, reason: "BadPriority"),
        Case(
            name: "expiration not a number", request: .push(extra: [("apns-expiration", "soon")]), status: 400,
            reason: "BadExpirationDate"),
        Case(
            name: "collapse id of 65 bytes", request: .push(extra: [("apns-collapse-id", longCollapseID)]), status: 400,
            reason: "BadCollapseId"),
        Case(
            name: "apns-id not a UUID", request: .push(extra: [("apns-id", "not-a-uuid")]), status: 400,
            reason: "BadMessageId"),
        Case(name: "empty body", request: .push(body: nil), status: 400, reason: "PayloadEmpty"),
        Case(name: "4097 bytes", request: .push(body: paddedPayload(4097)), status: 413, reason: "PayloadTooLarge"),
        Case(
            name: "voip over 5120 bytes",
            request: .push(
                topic: "com.example.app.voip", extra: [("apns-push-type", "voip")], body: paddedPayload(5121)),
            status: 413, reason: "PayloadTooLarge"),
        Case(name: "a JSON array", request: .push(body: Array("[1,2]".utf8)), status: 400, reason: "PayloadEmpty"),
        Case(name: "not JSON", request: .push(body: Array("hello".utf8)), status: 400, reason: "PayloadEmpty"),
    ]

    @Test("each validation failure gets its status and a JSON reason", arguments: cases)
    func validation(_ testCase: Case) throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(testCase.request)
        #expect(response.status == testCase.status)
        #expect(response.reason == testCase.reason)
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("apns-id").flatMap(APNsID.init) != nil)
        #expect(response.headerBlocks == 1 && !response.headersEndStream)
        #expect(response.dataChunks.count == 1, "one DATA frame with the reason")
        #expect(response.dataEndStream)
        #expect(response.json?.objectMembers?.count == 1, "only \"reason\" (no timestamp except for 410)")
        #expect(harness.server.stats.count(reason: testCase.reason) == 1)
    }

    @Test("limits that are not errors: 4096 bytes, 5120 for voip, priority 5 background, 64-byte collapse id")
    func limitsAccepted() throws {
        let harness = try Harness()
        defer { harness.shutdown() }
        let client = try harness.client()
        let responses = try client.send([
            .push(body: paddedPayload(4096)),
            .push(topic: "com.example.app.voip", extra: [("apns-push-type", "voip")], body: paddedPayload(5120)),
            .push(extra: [("apns-push-type", "background"), ("apns-priority", "5")]),
            .push(extra: [("apns-collapse-id", String(repeating: "c", count: 64)), ("apns-expiration", "0")]),
            .push(topic: "com.example.app.push-type.liveactivity", extra: [("apns-push-type", "liveactivity")]),
            .push(token: sampleToken.uppercased()),
        ])
        #expect(responses.map(\.status) == [200, 200, 200, 200, 200, 200])
    }

    @Test("410 Unregistered carries a timestamp in milliseconds")
    func unregistered() throws {
        let dead = String(repeating: "de", count: 32)
        let harness = try Harness { $0.unregisteredTokens = [dead.uppercased()] }
        defer { harness.shutdown() }
        let client = try harness.client()
        let before = wallSeconds() * 1000
        let response = try client.send(.push(token: dead))
        let after = (wallSeconds() + 1) * 1000
        #expect(response.status == 410)
        #expect(response.reason == "Unregistered")
        guard case .number(let text)? = response.json?["timestamp"], let timestamp = Int64(text) else {
            Issue.record("no integer timestamp in \(String(decoding: response.body, as: UTF8.self))")
            return
        }
        #expect(timestamp >= before && timestamp <= after)
    }

    @Test("bad-token list and the rejections hook give any reason with its documented status")
    func tokenRules() throws {
        let bad = String(repeating: "0b", count: 32)
        let throttled = String(repeating: "0c", count: 32)
        let expired = String(repeating: "0d", count: 32)
        let custom = String(repeating: "0e", count: 32)
        let harness = try Harness {
            $0.badTokens = [bad]
            $0.rejections = [throttled: .tooManyRequests, expired: .expiredToken, custom: .other("Teapot")]
            $0.unregisteredTimestamp = 1_700_000_000_000
        }
        defer { harness.shutdown() }
        let client = try harness.client()
        let responses = try client.send([
            .push(token: bad), .push(token: throttled), .push(token: expired), .push(token: custom), .push(),
        ])
        #expect(responses.map(\.status) == [400, 429, 410, 400, 200])
        #expect(responses.map(\.reason) == ["BadDeviceToken", "TooManyRequests", "ExpiredToken", "Teapot", nil])
        #expect(responses[2].json?["timestamp"] == .number("1700000000000"))
    }

    @Test("a body over the hard cap is answered 413 at once and its stream reset")
    func hugeBody() throws {
        let harness = try Harness { $0.maxBodyBytes = 16 << 10 }
        defer { harness.shutdown() }
        let client = try harness.client()
        let response = try client.send(.push(body: paddedPayload(200 << 10)))
        #expect(response.status == 413)
        #expect(response.reason == "PayloadTooLarge")
        // The connection stays usable.
        #expect(try client.send(.push()).status == 200)
    }
}

/// A JSON object of exactly `size` bytes.
func paddedPayload(_ size: Int) -> [UInt8] {
    let prefix = Array(#"{"aps":{},"pad":""#.utf8)
    let suffix = Array(#""}"#.utf8)
    return prefix + Array(repeating: UInt8(ascii: "x"), count: size - prefix.count - suffix.count) + suffix
}
