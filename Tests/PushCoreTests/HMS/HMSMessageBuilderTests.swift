import Testing

@testable import PushCore

@Suite("Huawei Push Kit messages")
struct HMSMessageBuilderTests {
    static let token = "IQAAAACy0kJzAACVKm9c+0n/wXHe_lGq-1Zw"

    func prepare(_ n: NotificationRequest, api: HMSAPI) -> Result<PreparedHMSMessage, ValidationError> {
        var n = n
        if n.tokens.isEmpty { n.tokens = [Self.token] }
        return HMSMessageBuilder.prepare(n, at: "notifications[0]", api: api, now: 1_000)
    }

    func body(_ n: NotificationRequest, api: HMSAPI) throws -> String {
        let prepared = try prepare(n, api: api).get()
        return String(decoding: prepared.body(token: Self.token), as: UTF8.self)
    }

    @Test("v3: the notification in payload, a category, clickAction with the data, push-type 0; ttl in pushOptions")
    func v3Notification() throws {
        let n = NotificationRequest(
            alert: .init(title: "Order 42", body: "is on its way"), badge: 2, dataJSON: #"{"order":"42"}"#,
            expiration: 1_600)
        #expect(
            try body(n, api: .v3)
                == #"{"target":{"token":["\#(Self.token)"]},"payload":{"notification":{"category":"MARKETING","title":"Order 42","body":"is on its way","clickAction":{"actionType":0,"data":{"order":"42"}},"badge":{"setNum":2}}},"pushOptions":{"ttl":600}}"#
        )
        let prepared = try prepare(n, api: .v3).get()
        #expect(prepared.pushType == "0" && prepared.expiration == 1_600)
    }

    @Test("v3: data alone is a background message, push-type 6, extraData")
    func v3Background() throws {
        let n = NotificationRequest(contentAvailable: true, dataJSON: #"{"sync":"1"}"#)
        #expect(
            try body(n, api: .v3)
                == #"{"target":{"token":["\#(Self.token)"]},"payload":{"extraData":"{\"sync\":\"1\"}"}}"#)
        #expect(try prepare(n, api: .v3).get().pushType == "6")
    }

    @Test("v2: android.notification with click_action, data as a string, urgency and ttl")
    func v2Notification() throws {
        let n = NotificationRequest(
            alert: .init(title: "Hi", body: "there"), category: "IM", dataJSON: #"{"k":"v"}"#, priority: 10,
            expiration: 1_060)
        #expect(
            try body(n, api: .v2)
                == #"{"validate_only":false,"message":{"token":["\#(Self.token)"],"data":"{\"k\":\"v\"}","android":{"category":"IM","urgency":"HIGH","ttl":"60s","notification":{"title":"Hi","body":"there","click_action":{"type":3}}}}}"#
        )
        #expect(try prepare(n, api: .v2).get().pushType == nil)
    }

    @Test("refusals name their field")
    func refusals() {
        func refusal(_ n: NotificationRequest, api: HMSAPI = .v3) -> String? {
            if case .failure(let error) = prepare(n, api: api) { return error.description }
            return nil
        }
        #expect(
            refusal(NotificationRequest(tokens: ["bad token"], alert: .init(title: "t", body: "b")))?
                .hasPrefix("notifications[0].tokens[0]") == true)
        #expect(
            refusal(NotificationRequest(alert: .init(title: "t")))?.hasPrefix("notifications[0].alert.body") == true)
        #expect(
            refusal(NotificationRequest(alert: .init(title: "t", body: "b"), category: "NEWS"))?
                .hasPrefix("notifications[0].category") == true)
        #expect(
            refusal(NotificationRequest(alert: .init(title: "t", body: "b"), sound: "ding"))?
                .hasPrefix("notifications[0].sound") == true)
        #expect(
            refusal(NotificationRequest(alert: .init(title: "t", body: "b"), collapseID: "c"))?
                .hasPrefix("notifications[0].collapse_id") == true)
        #expect(
            refusal(NotificationRequest(payloadJSON: #"{"target":{}}"#))?.hasPrefix("notifications[0].payload_json")
                == true)
        #expect(
            refusal(NotificationRequest(payloadJSON: #"{"token":["x"]}"#), api: .v2)?
                .hasPrefix("notifications[0].payload_json") == true)
        let big = String(repeating: "x", count: 4_200)
        #expect(refusal(NotificationRequest(alert: .init(title: "t", body: big)))?.contains("at most 4096") == true)
    }

    @Test("answers: success, dead tokens, credentials, flow control, other codes")
    func classifier() {
        func outcome(_ status: Int, _ body: String) -> ClassifiedAnswer {
            HMSResponseClassifier.outcome(status: status, body: Array(body.utf8), retryAfter: nil, now: 0)
        }
        #expect(outcome(200, #"{"code":"80000000","msg":"Success","requestId":"r1"}"#) == .delivered(id: "r1"))
        #expect(
            outcome(400, #"{"code":"80300007","msg":"All the tokens are invalid","requestId":"r"}"#)
                == .rejected(reason: "80300007 All the tokens are invalid", httpStatus: 400, invalidatesToken: true))
        #expect(
            outcome(200, #"{"code":"80100000","msg":"{\"illegalTokens\":{\"tokenFormatError\":[\"x\"]}}"}"#)
                == .rejected(
                    reason: #"80100000 {"illegalTokens":{"tokenFormatError":["x"]}}"#, httpStatus: 200,
                    invalidatesToken: true))
        #expect(
            outcome(401, #"{"code":"80200005","msg":"Jwt token expired"}"#)
                == .unauthenticated(
                    reason: "80200005 Jwt token expired", httpStatus: 401))
        #expect(outcome(503, "") == .transient(reason: "HTTP 503", httpStatus: 503, retryAfter: nil))
        #expect(
            outcome(200, #"{"code":"81000001","msg":"Inner Error"}"#)
                == .transient(
                    reason: "81000001 Inner Error", httpStatus: 200, retryAfter: nil))
        #expect(
            outcome(400, #"{"code":"80300008","msg":"Push message size is too long"}"#)
                == .rejected(reason: "80300008 Push message size is too long", httpStatus: 400, invalidatesToken: false)
        )
    }

    @Test("80300007 and 80100000 disable the token only for a dead-token reason, or v2's plain text")
    func deadTokenReasons() {
        func outcome(_ body: String) -> ClassifiedAnswer {
            HMSResponseClassifier.outcome(status: 400, body: Array(body.utf8), retryAfter: nil, now: 0)
        }
        func invalidates(_ answer: ClassifiedAnswer) -> Bool {
            if case .rejected(_, _, let invalidates, _, _) = answer { return invalidates }
            return false
        }
        #expect(invalidates(outcome(#"{"code":"80300007","msg":"All the tokens are invalid"}"#)))
        #expect(
            invalidates(
                outcome(#"{"code":"80300007","msg":"{\"failure\":1,\"illegalTokens\":{\"noRight\":[\"t\"]}}"}"#)))
        #expect(
            !invalidates(
                outcome(#"{"code":"80300007","msg":"{\"illegalTokens\":{\"noPushTypeRight\":[\"t\"]}}"}"#)))
        #expect(
            !invalidates(
                outcome(
                    #"{"code":"80300007","msg":"{\"illegalTokens\":{\"noRightToSendThisLiveNotificationEvent\":[\"t\"]}}"}"#
                )))
        #expect(!invalidates(outcome(#"{"code":"80100000","msg":"partial"}"#)))
    }

    @Test(
        "Push Kit's own limits: badge 0-99, no v3 priority, background needs data, no content_available with an alert")
    func limits() {
        func refusal(_ n: NotificationRequest, api: HMSAPI = .v3) -> String? {
            if case .failure(let error) = prepare(n, api: api) { return error.description }
            return nil
        }
        #expect(
            refusal(NotificationRequest(alert: .init(title: "t", body: "b"), badge: 100))?.hasPrefix(
                "notifications[0].badge") == true)
        #expect(
            refusal(NotificationRequest(alert: .init(title: "t", body: "b"), priority: 10))?.hasPrefix(
                "notifications[0].priority") == true)
        #expect(refusal(NotificationRequest(alert: .init(title: "t", body: "b"), priority: 10), api: .v2) == nil)
        #expect(refusal(NotificationRequest(contentAvailable: true))?.hasPrefix("notifications[0].data_json") == true)
        #expect(
            refusal(NotificationRequest(alert: .init(title: "t", body: "b"), contentAvailable: true))?
                .hasPrefix("notifications[0].content_available") == true)
    }

    @Test("a Publish's HMS entry: title, body and data; default alone is a data message")
    func publishEntry() throws {
        let message = try SNSMessage.parse(
            message: #"{"default":"d","HMS":"{\"title\":\"T\",\"body\":\"B\",\"data\":{\"k\":\"v\"}}"}"#,
            structure: "json", target: .topic, attributes: [:])
        let prepared = try #require(
            try SNSHMSPayload.build(message: message, attributes: [:], api: .v3, publishedAt: 0, now: 0))
        let body = String(decoding: prepared.body(token: "tok"), as: UTF8.self)
        #expect(body.contains(#""title":"T","body":"B","clickAction":{"actionType":0,"data":{"k":"v"}}"#))
        let plain = try SNSMessage.parse(message: "hello", structure: "", target: .topic, attributes: [:])
        let data = try #require(
            try SNSHMSPayload.build(message: plain, attributes: [:], api: .v2, publishedAt: 0, now: 0))
        #expect(String(decoding: data.body(token: "tok"), as: UTF8.self).contains(#""data":"{\"default\":\"hello\"}""#))
    }
}
