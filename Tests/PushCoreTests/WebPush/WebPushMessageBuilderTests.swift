import Testing

@testable import PushCore

@Suite("Web Push message builder")
struct WebPushMessageBuilderTests {
    static let now: Int64 = 1_700_000_000
    static let subscription = #"{"endpoint":"https://fcm.googleapis.com/fcm/send/x","keys":{}}"#

    func prepare(_ n: NotificationRequest) -> Result<PreparedWebPushMessage, ValidationError> {
        var n = n
        if n.tokens.isEmpty { n.tokens = [Self.subscription] }
        return WebPushMessageBuilder.prepare(n, at: "notifications[1]", now: Self.now)
    }

    func plaintext(_ n: NotificationRequest) throws -> String {
        String(decoding: try prepare(n).get().plaintext, as: UTF8.self)
    }

    func error(_ n: NotificationRequest) -> String? {
        if case .failure(let error) = prepare(n) { return error.description }
        return nil
    }

    @Test func fieldsBuildTheDocumentedJSON() throws {
        let n = NotificationRequest(
            alert: .init(title: "Order 42", body: "is on its way", image: "https://example.com/van.png"), badge: 3,
            dataJSON: #"{"url":"/orders/42","n":1.50}"#)
        #expect(
            try plaintext(n)
                == #"{"title":"Order 42","body":"is on its way","image":"https://example.com/van.png","app_badge":3,"data":{"url":"/orders/42","n":1.50}}"#
        )
        #expect(try plaintext(NotificationRequest(badge: 0)) == #"{"app_badge":0}"#)
        #expect(try plaintext(NotificationRequest(contentAvailable: true)) == "{}")
    }

    @Test func payloadJSONIsSentAsGiven() throws {
        let payload = #"{ "web_push": 8030, "notification": {"title": "Hi", "navigate": "https://example.com/"} }"#
        #expect(try plaintext(NotificationRequest(payloadJSON: payload)) == payload)
        #expect(error(NotificationRequest(payloadJSON: "{nope")) != nil)
        #expect(
            error(NotificationRequest(alert: .init(title: "x"), payloadJSON: "{}"))
                == "notifications[1].alert: must be empty when payload_json is set")
    }

    @Test func headersFromExpirationPriorityUrgencyAndCollapseID() throws {
        let message = try prepare(
            NotificationRequest(
                alert: .init(body: "b"), priority: 10, expiration: Self.now + 600, collapseID: "order-42")
        ).get()
        #expect(message.ttl == 600)
        #expect(message.expiration == Self.now + 600)
        #expect(message.urgency == "high")
        #expect(message.topic == "order-42")
        let plain = try prepare(NotificationRequest(alert: .init(body: "b"))).get()
        #expect(plain.ttl == WebPushMessageRules.defaultTTL)
        #expect(plain.urgency == "")
        #expect(try prepare(NotificationRequest(alert: .init(body: "b"), priority: 5)).get().urgency == "normal")
        #expect(try prepare(NotificationRequest(alert: .init(body: "b"), priority: 1)).get().urgency == "low")
        #expect(
            try prepare(NotificationRequest(alert: .init(body: "b"), priority: 10, urgency: "very-low")).get().urgency
                == "very-low")
        #expect(try prepare(NotificationRequest(alert: .init(body: "b"), expiration: Self.now - 5)).get().ttl == 0)
        #expect(
            try prepare(NotificationRequest(alert: .init(body: "b"), expiration: Self.now + 90 * 86400)).get().ttl
                == WebPushMessageRules.maxTTL)
    }

    @Test func everyRefusalNamesItsField() {
        let body = NotificationRequest.Alert(body: "b")
        #expect(
            error(NotificationRequest(alert: body, urgency: "urgent"))
                == "notifications[1].urgency: must be very-low, low, normal or high")
        #expect(
            error(NotificationRequest(alert: body, collapseID: String(repeating: "a", count: 33)))?.hasPrefix(
                "notifications[1].collapse_id: is the Web Push Topic") == true)
        #expect(
            error(NotificationRequest(alert: body, collapseID: "spike"))?.hasPrefix("notifications[1].collapse_id:")
                == true, "5 characters: no base64 has that length")
        #expect(
            error(NotificationRequest(alert: body, collapseID: "a b c d"))?.hasPrefix("notifications[1].collapse_id:")
                == true)
        #expect(
            error(NotificationRequest(alert: body, sound: "default"))?.hasPrefix(
                "notifications[1].sound: cannot be sent by Web Push") == true)
        #expect(
            error(NotificationRequest(alert: body, topic: "com.example"))?.hasPrefix("notifications[1].topic:") == true)
        #expect(error(NotificationRequest(alert: body, id: "x"))?.hasPrefix("notifications[1].id:") == true)
        #expect(
            error(NotificationRequest(alert: body, pushType: .alert))?.hasPrefix("notifications[1].push_type:") == true)
        #expect(
            error(NotificationRequest(alert: .init(subtitle: "s")))?.hasPrefix("notifications[1].alert.subtitle:")
                == true)
        #expect(error(NotificationRequest(alert: body, category: "c"))?.hasPrefix("notifications[1].category:") == true)
        #expect(
            error(NotificationRequest(alert: body, threadID: "t"))?.hasPrefix("notifications[1].thread_id:") == true)
        #expect(
            error(NotificationRequest(alert: body, mutableContent: true))?.hasPrefix(
                "notifications[1].mutable_content:") == true)
        #expect(
            error(NotificationRequest(alert: body, interruptionLevel: "active"))?.hasPrefix(
                "notifications[1].interruption_level:") == true)
        #expect(error(NotificationRequest(dataJSON: "[1]")) == "notifications[1].data_json: must be a JSON object")
        #expect(error(NotificationRequest())?.hasPrefix("notifications[1]: notification has nothing to send") == true)
        #expect(
            error(NotificationRequest(alert: body, priority: 7)) == "notifications[1].priority: must be 0, 1, 5 or 10")
        var none = NotificationRequest(alert: body)
        none.tokens = []
        #expect(
            WebPushMessageBuilder.prepare(none, at: "notifications[1]", now: Self.now).failure?.description
                == "notifications[1].tokens: at least one subscription is required")
    }

    @Test func plaintextMustFitOneRecord() throws {
        let fits = "{\"a\":\"" + String(repeating: "x", count: WebPushMessageRules.maxPlaintextBytes - 8) + "\"}"
        #expect(fits.utf8.count == WebPushMessageRules.maxPlaintextBytes)
        #expect(error(NotificationRequest(payloadJSON: fits)) == nil)
        let over = "{\"a\":\"" + String(repeating: "x", count: WebPushMessageRules.maxPlaintextBytes - 7) + "\"}"
        #expect(
            error(NotificationRequest(payloadJSON: over))?.hasPrefix(
                "notifications[1].payload_json: the Web Push message is 3994 bytes") == true)
    }

    @Test func urgencyIsRefusedByTheOtherProviders() {
        let n = NotificationRequest(
            tokens: [String(repeating: "a", count: 64)], alert: .init(body: "b"), urgency: "high")
        #expect(NotificationValidator.prepare(n, at: "n", bundleID: "com.example").failure?.field == "n.urgency")
        #expect(FCMMessageBuilder.prepare(n, at: "n", now: Self.now).failure?.field == "n.urgency")
        #expect(ADMMessageBuilder.prepare(n, at: "n", now: Self.now).failure?.field == "n.urgency")
    }
}

@Suite("Web Push response classifier")
struct WebPushResponseClassifierTests {
    func outcome(_ status: Int, _ body: String = "", retryAfter: String? = nil) -> ClassifiedAnswer {
        WebPushResponseClassifier.outcome(status: status, body: Array(body.utf8), retryAfter: retryAfter, now: 0)
    }

    @Test func statusesMapAsDocumented() {
        #expect(outcome(201) == .delivered(id: ""))
        #expect(
            outcome(410, #"{"code":410,"errno":106,"error":"Gone","message":"Request did not validate"}"#)
                == .rejected(reason: "Request did not validate", httpStatus: 410, invalidatesToken: true))
        #expect(outcome(404) == .rejected(reason: "HTTP 404", httpStatus: 404, invalidatesToken: true))
        #expect(
            outcome(403, #"{"reason":"BadJwtToken"}"#)
                == .rejected(reason: "BadJwtToken", httpStatus: 403, invalidatesToken: false))
        #expect(
            outcome(401, #"{"code":401,"errno":109,"error":"Unauthorized"}"#)
                == .rejected(reason: "Unauthorized", httpStatus: 401, invalidatesToken: false))
        #expect(
            outcome(400, "invalid JWT provided\n")
                == .rejected(reason: "invalid JWT provided", httpStatus: 400, invalidatesToken: false))
        #expect(
            outcome(413, "<html><body>too big</body></html>")
                == .rejected(reason: "HTTP 413", httpStatus: 413, invalidatesToken: false))
        #expect(
            outcome(429, retryAfter: "7") == .transient(reason: "HTTP 429", httpStatus: 429, retryAfter: .seconds(7)))
        #expect(
            outcome(503, #"{"reason":"ServiceUnavailable"}"#)
                == .transient(reason: "ServiceUnavailable", httpStatus: 503, retryAfter: nil))
        #expect(
            outcome(406, retryAfter: "60") == .transient(reason: "HTTP 406", httpStatus: 406, retryAfter: .seconds(60)))
        let long = String(repeating: "y", count: 500)
        guard case .rejected(let reason, _, _, _, _) = outcome(400, #"{"message":"\#(long)"}"#) else {
            Issue.record("not rejected")
            return
        }
        #expect(reason.utf8.count <= 200)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension WebPushMessageBuilderTests {
    @Test func declarativeFormIsTheDocumented8030JSON() throws {
        var n = NotificationRequest(alert: .init(title: "Hi", body: "there"), badge: 3)
        n.webPush = .init(
            declarative: true, navigate: "https://example.com/a", lang: "en-US", dir: "ltr", silent: true, mutable: true
        )
        #expect(
            try plaintext(n)
                == #"{"web_push":8030,"notification":{"title":"Hi","body":"there","navigate":"https://example.com/a","lang":"en-US","dir":"ltr","silent":true,"mutable":true},"app_badge":3}"#
        )
        var minimal = NotificationRequest(alert: .init(title: "Hi"))
        minimal.webPush = .init(declarative: true, navigate: "https://example.com/")
        #expect(
            try plaintext(minimal)
                == #"{"web_push":8030,"notification":{"title":"Hi","navigate":"https://example.com/"}}"#)
    }

    @Test func declarativeRulesNameTheirField() {
        func refusal(_ configure: (inout NotificationRequest) -> Void) -> String? {
            var n = NotificationRequest(alert: .init(title: "Hi"))
            n.webPush = .init(declarative: true, navigate: "https://example.com/")
            configure(&n)
            return error(n)
        }
        #expect(
            refusal { $0.webPush?.navigate = "" }?.hasPrefix("notifications[1].webpush.navigate: is required") == true)
        #expect(
            refusal { $0.webPush?.navigate = "http://example.com/" }?.hasPrefix("notifications[1].webpush.navigate")
                == true)
        #expect(refusal { $0.webPush?.navigate = "/relative" }?.hasPrefix("notifications[1].webpush.navigate") == true)
        #expect(refusal { $0.webPush?.dir = "up" }?.hasPrefix("notifications[1].webpush.dir") == true)
        #expect(refusal { $0.webPush?.lang = "en US" }?.hasPrefix("notifications[1].webpush.lang") == true)
        #expect(refusal { $0.alert = .init(body: "no title") }?.hasPrefix("notifications[1].alert.title") == true)
        #expect(
            refusal { $0.webPush?.declarative = false }?.hasPrefix("notifications[1].webpush.navigate: is a member")
                == true)
    }
}
