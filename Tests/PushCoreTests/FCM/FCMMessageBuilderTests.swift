import Testing

@testable import PushCore

@Suite("FCM message builder")
struct FCMMessageBuilderTests {
    static let token = "fcm:APA91b_token-1.x"
    static let now: Int64 = 1_700_000_000
    static let path = "notifications[2]"

    func request(
        alert: NotificationRequest.Alert? = nil, badge: Int32? = nil, sound: String = "", category: String = "",
        threadID: String = "", contentAvailable: Bool = false, mutableContent: Bool = false,
        interruptionLevel: String = "", dataJSON: String = "", payloadJSON: String = "", pushType: PushType? = nil,
        priority: Int32 = 0, expiration: Int64 = 0, collapseID: String = "", topic: String = "", id: String = "",
        tokens: [String] = [token]
    ) -> NotificationRequest {
        NotificationRequest(
            app: "android", tokens: tokens, alert: alert, badge: badge, sound: sound, category: category,
            threadID: threadID, contentAvailable: contentAvailable, mutableContent: mutableContent,
            interruptionLevel: interruptionLevel, dataJSON: dataJSON, payloadJSON: payloadJSON, pushType: pushType,
            priority: priority, expiration: expiration, collapseID: collapseID, topic: topic, id: id)
    }

    func prepare(_ n: NotificationRequest) throws -> PreparedFCMMessage {
        try FCMMessageBuilder.prepare(n, at: Self.path, now: Self.now).get()
    }

    /// The body for the first token, as text.
    func body(_ n: NotificationRequest) throws -> String {
        let prepared = try prepare(n)
        return String(decoding: prepared.body(token: Self.token), as: UTF8.self)
    }

    /// The parsed `message` object of the body.
    func message(_ n: NotificationRequest) throws -> JSONValue {
        let prepared = try prepare(n)
        return try #require(try JSONParser.parse(prepared.body(token: Self.token))["message"])
    }

    func error(_ n: NotificationRequest) -> ValidationError? {
        if case .failure(let error) = FCMMessageBuilder.prepare(n, at: Self.path, now: Self.now) { return error }
        return nil
    }

    @Test("title and body: notification block, HIGH priority, token first, exact bytes")
    func simpleAlert() throws {
        let n = request(alert: .init(title: "Hi", body: "There"))
        #expect(
            try body(n)
                == #"{"message":{"token":"fcm:APA91b_token-1.x","notification":{"title":"Hi","body":"There"},"#
                + #""android":{"priority":"HIGH"},"apns":{"headers":{"apns-priority":"10"}}}}"#)
        let prepared = try prepare(n)
        #expect(prepared.bodyPrefix == Array(#"{"message":{"token":""#.utf8))
        #expect(prepared.tokens == [Self.token])
        #expect(prepared.expiration == nil)
    }

    @Test("each token gets the same prefix and suffix around it")
    func perToken() throws {
        let prepared = try prepare(request(alert: .init(title: "x"), tokens: ["a", "b:c"]))
        #expect(prepared.tokens == ["a", "b:c"])
        let second = try JSONParser.parse(prepared.body(token: "b:c"))
        #expect(second["message"]?["token"] == .string("b:c"))
        #expect(second["message"]?["notification"]?["title"] == .string("x"))
    }

    @Test("image goes to notification.image, and an image alone is something to send")
    func image() throws {
        let m = try message(request(alert: .init(title: "t", image: "https://example.com/a.png")))
        #expect(m["notification"]?["image"] == .string("https://example.com/a.png"))
        let only = try message(request(alert: .init(image: "https://example.com/b.png")))
        #expect(only["notification"] == .object([("image", .string("https://example.com/b.png"))]))
        #expect(only["android"]?["priority"] == .string("HIGH"))
        #expect(only["apns"]?["payload"] == nil)
    }

    @Test("data_json becomes data, order and empty strings kept")
    func data() throws {
        let m = try message(request(dataJSON: #"{"b":"2","a":"","c":"x\"y"}"#))
        #expect(m["data"] == .object([("b", .string("2")), ("a", .string("")), ("c", .string("x\"y"))]))
        #expect(m["notification"] == nil)
        #expect(m["android"]?["notification"] == nil)
    }

    @Test("a data value that is not a string is refused, naming the key")
    func dataNotString() {
        for value in ["1", "true", "null", "{}", "[]"] {
            let e = error(request(dataJSON: #"{"ok":"1","n":"# + value + "}"))
            #expect(e?.field == "notifications[2].data_json.n", "\(value)")
            #expect(e?.message.hasPrefix("must be a JSON string") == true)
        }
    }

    @Test("reserved data keys are refused, naming the key")
    func reservedDataKeys() {
        for key in ["from", "notification", "message_type", "google.c.a", "gcm.n.e", "googleplay", "gcmx"] {
            let e = error(request(dataJSON: #"{""# + key + #"":"v"}"#))
            #expect(e?.field == "notifications[2].data_json.\(key)", "\(key)")
            #expect(e?.message.contains("reserved") == true)
        }
        #expect(error(request(dataJSON: #"{"From":"v","fromage":"v","my.google":"v"}"#)) == nil)
    }

    @Test("data_json must be a JSON object")
    func dataNotObject() {
        #expect(
            error(request(dataJSON: "[1]"))
                == ValidationError(field: "notifications[2].data_json", message: "must be a JSON object of strings"))
        #expect(error(request(dataJSON: "{"))?.field == "notifications[2].data_json")
    }

    @Test("priority: 10 and default HIGH for a visible message; 5 and 1 NORMAL; apns-priority as a string")
    func priority() throws {
        let alert = NotificationRequest.Alert(title: "t")
        for (priority, android, apns) in [
            (0, "HIGH", "10"), (10, "HIGH", "10"), (5, "NORMAL", "5"), (1, "NORMAL", "1"),
        ] {
            let m = try message(request(alert: alert, priority: Int32(priority)))
            #expect(m["android"]?["priority"] == .string(android), "\(priority)")
            #expect(m["apns"]?["headers"]?["apns-priority"] == .string(apns), "\(priority)")
        }
        #expect(
            error(request(alert: alert, priority: 3))
                == ValidationError(field: "notifications[2].priority", message: "must be 0, 1, 5 or 10"))
    }

    @Test("a data-only message defaults to NORMAL/5; an explicit 10 is HIGH for Android but 5 for iOS")
    func silentPriority() throws {
        let dataOnly = try message(request(dataJSON: #"{"k":"v"}"#))
        #expect(dataOnly["android"]?["priority"] == .string("NORMAL"))
        #expect(dataOnly["apns"]?["headers"] == .object([("apns-priority", .string("5"))]))
        let urgent = try message(request(dataJSON: #"{"k":"v"}"#, priority: 10))
        #expect(urgent["android"]?["priority"] == .string("HIGH"))
        #expect(urgent["apns"]?["headers"]?["apns-priority"] == .string("5"))
    }

    @Test("content_available alone is a background push: apns-push-type background, priority 5")
    func background() throws {
        let m = try message(request(contentAvailable: true))
        #expect(m["android"]?["priority"] == .string("NORMAL"))
        #expect(
            m["apns"]
                == .object([
                    ("headers", .object([("apns-priority", .string("5")), ("apns-push-type", .string("background"))])),
                    ("payload", .object([("aps", .object([("content-available", .number("1"))]))])),
                ]))
        #expect(
            error(request(contentAvailable: true, pushType: .background, priority: 10))
                == ValidationError(
                    field: "notifications[2].priority", message: "priority 10 is not allowed for background pushes"))
    }

    @Test("expiration: android.ttl counted from now, apns-expiration, and the prepared expiration")
    func expiration() throws {
        let n = request(alert: .init(title: "t"), expiration: Self.now + 3600)
        let m = try message(n)
        #expect(m["android"]?["ttl"] == .string("3600s"))
        #expect(m["apns"]?["headers"]?["apns-expiration"] == .string(String(Self.now + 3600)))
        #expect(try prepare(n).expiration == Self.now + 3600)
    }

    @Test("an expiration already past sends ttl 0s; one beyond 4 weeks is clamped to 2419200s")
    func expirationBounds() throws {
        let past = try message(request(alert: .init(title: "t"), expiration: Self.now - 10))
        #expect(past["android"]?["ttl"] == .string("0s"))
        let far = request(alert: .init(title: "t"), expiration: Self.now + 10_000_000)
        #expect(try message(far)["android"]?["ttl"] == .string("2419200s"))
        #expect(try message(far)["apns"]?["headers"]?["apns-expiration"] == .string(String(Self.now + 10_000_000)))
        #expect(try prepare(far).expiration == Self.now + 2_419_200)
        #expect(error(request(alert: .init(title: "t"), expiration: -1))?.field == "notifications[2].expiration")
    }

    @Test("collapse_id: android.collapse_key and apns-collapse-id; APNs's 64-byte limit applies")
    func collapse() throws {
        let m = try message(request(alert: .init(title: "t"), collapseID: "scores"))
        #expect(m["android"]?["collapse_key"] == .string("scores"))
        #expect(m["apns"]?["headers"]?["apns-collapse-id"] == .string("scores"))
        let long = request(alert: .init(title: "t"), collapseID: String(repeating: "c", count: 65))
        #expect(error(long)?.field == "notifications[2].collapse_id")
    }

    @Test("push_type and topic become APNs headers")
    func headers() throws {
        let m = try message(request(alert: .init(title: "t"), pushType: .alert, topic: "com.example.app"))
        #expect(
            m["apns"]?["headers"]
                == .object([
                    ("apns-priority", .string("10")), ("apns-push-type", .string("alert")),
                    ("apns-topic", .string("com.example.app")),
                ]))
        #expect(error(request(alert: .init(title: "t"), topic: "com.example app"))?.field == "notifications[2].topic")
    }

    @Test("APNs-only fields: the aps payload, and Android equivalents")
    func apnsOnly() throws {
        let alert = NotificationRequest.Alert(
            title: "T", subtitle: "S", body: "B", launchImage: "l.png", titleLocKey: "TK", titleLocArgs: ["ta"],
            locKey: "BK", locArgs: ["b1", "b2"])
        let m = try message(
            request(
                alert: alert, badge: 3, sound: "ding.caf", category: "REPLY", threadID: "th", contentAvailable: true,
                mutableContent: true, interruptionLevel: "time-sensitive"))
        #expect(
            m["android"]?["notification"]
                == .object([
                    ("title_loc_key", .string("TK")), ("title_loc_args", .array([.string("ta")])),
                    ("body_loc_key", .string("BK")), ("body_loc_args", .array([.string("b1"), .string("b2")])),
                    ("sound", .string("ding.caf")), ("click_action", .string("REPLY")),
                    ("notification_count", .number("3")),
                ]))
        let aps = try #require(m["apns"]?["payload"]?["aps"])
        #expect(
            aps["alert"]
                == .object([
                    ("title", .string("T")), ("subtitle", .string("S")), ("body", .string("B")),
                    ("launch-image", .string("l.png")), ("title-loc-key", .string("TK")),
                    ("title-loc-args", .array([.string("ta")])), ("loc-key", .string("BK")),
                    ("loc-args", .array([.string("b1"), .string("b2")])),
                ]))
        #expect(aps["badge"] == .number("3"))
        #expect(aps["sound"] == .string("ding.caf"))
        #expect(aps["thread-id"] == .string("th"))
        #expect(aps["category"] == .string("REPLY"))
        #expect(aps["content-available"] == .number("1"))
        #expect(aps["mutable-content"] == .number("1"))
        #expect(aps["interruption-level"] == .string("time-sensitive"))
        #expect(m["android"]?["priority"] == .string("HIGH"))
        // With something to show, content_available doesn't make it a background push.
        #expect(m["apns"]?["headers"] == .object([("apns-priority", .string("10"))]))
    }

    @Test("title and body alone build no aps.alert: FCM copies notification into it")
    func noAPSAlertForTitleBody() throws {
        let m = try message(request(alert: .init(title: "T", body: "B"), sound: "default"))
        #expect(m["apns"]?["payload"]?["aps"] == .object([("sound", .string("default"))]))
    }

    @Test("badge 0 clears the iOS badge but sends no Android notification_count")
    func badgeZero() throws {
        let m = try message(request(badge: 0))
        #expect(m["apns"]?["payload"]?["aps"] == .object([("badge", .number("0"))]))
        #expect(m["android"]?["notification"] == nil)
        #expect(error(request(badge: -1))?.field == "notifications[2].badge")
    }

    @Test("the APNs field checks apply: interruption level")
    func interruptionLevel() {
        #expect(
            error(request(alert: .init(title: "t"), interruptionLevel: "loud"))?.field
                == "notifications[2].interruption_level")
    }

    @Test("id cannot be set for FCM")
    func apnsID() {
        let e = error(request(alert: .init(title: "t"), id: "123e4567-e89b-12d3-a456-426614174000"))
        #expect(e?.field == "notifications[2].id")
        #expect(e?.message.contains("FCM") == true)
    }

    @Test("nothing to send is an error about the notification itself")
    func nothingToSend() {
        #expect(error(request())?.field == "notifications[2]")
        #expect(error(request(alert: .init()))?.message.hasPrefix("notification has nothing to send") == true)
        #expect(error(request(dataJSON: "{}"))?.field == "notifications[2]")
    }

    @Test("tokens: at least one, each checked with its index")
    func tokens() {
        #expect(
            error(request(alert: .init(title: "t"), tokens: []))
                == ValidationError(field: "notifications[2].tokens", message: "at least one token is required"))
        let e = error(request(alert: .init(title: "t"), tokens: ["good", "bad token"]))
        #expect(e?.field == "notifications[2].tokens[1]")
        #expect(e?.message.contains("A-Za-z0-9_:.-") == true)
    }

    @Test("payload_json is the rest of the message after the token, key order kept, compacted")
    func payloadJSON() throws {
        let payload =
            #"{ "data": {"z":"1", "a":"2"}, "android": {"ttl": "10.5s", "priority": "high"}, "fcm_options": {"analytics_label": "x"} }"#
        let n = request(payloadJSON: payload)
        #expect(
            try body(n)
                == #"{"message":{"token":"fcm:APA91b_token-1.x","data":{"z":"1","a":"2"},"#
                + #""android":{"ttl":"10.5s","priority":"high"},"fcm_options":{"analytics_label":"x"}}}"#)
        // The TTL counts from now; a fraction rounds up.
        #expect(try prepare(n).expiration == Self.now + 11)
        #expect(try body(request(payloadJSON: "{}")) == #"{"message":{"token":"fcm:APA91b_token-1.x"}}"#)
        #expect(try prepare(request(payloadJSON: "{}")).expiration == nil)
    }

    @Test("payload_json must not name a target")
    func payloadTarget() {
        for key in ["token", "topic", "condition"] {
            let e = error(request(payloadJSON: #"{"data":{},""# + key + #"":"x"}"#))
            #expect(e?.field == "notifications[2].payload_json", "\(key)")
            #expect(e?.message.contains("\"\(key)\"") == true)
        }
    }

    @Test("payload_json must be a JSON object")
    func payloadNotObject() {
        #expect(error(request(payloadJSON: "[]"))?.field == "notifications[2].payload_json")
        #expect(error(request(payloadJSON: "{,}"))?.field == "notifications[2].payload_json")
    }

    @Test("payload_json is checked against FCM's rules")
    func payloadRules() {
        let cases: [(String, String)] = [
            (#"{"data":{"n":1}}"#, "payload_json.data.n"),
            (#"{"data":{"google.x":"1"}}"#, "payload_json.data.google.x"),
            (#"{"data":[]}"#, "payload_json.data"),
            (#"{"android":{"ttl":"3600"}}"#, "payload_json.android.ttl"),
            (#"{"android":{"ttl":3600}}"#, "payload_json.android.ttl"),
            (#"{"android":{"ttl":"2419200.1s"}}"#, "payload_json.android.ttl"),
            (#"{"android":{"priority":"urgent"}}"#, "payload_json.android.priority"),
            (#"{"android":{"data":{"from":"x"}}}"#, "payload_json.android.data.from"),
            (#"{"android":"x"}"#, "payload_json.android"),
            (#"{"notification":[]}"#, "payload_json.notification"),
            (#"{"apns":{"headers":{"apns-priority":10}}}"#, "payload_json.apns.headers.apns-priority"),
            (#"{"webpush":{"data":{"k":true}}}"#, "payload_json.webpush.data.k"),
        ]
        for (payload, field) in cases {
            #expect(error(request(payloadJSON: payload))?.field == "notifications[2].\(field)", "\(payload)")
        }
        #expect(error(request(payloadJSON: #"{"android":{"ttl":"2419200s","priority":"NORMAL"}}"#)) == nil)
    }

    @Test("with payload_json every other message-building field must be empty")
    func payloadExclusive() {
        let payload = #"{"data":{"k":"v"}}"#
        let cases: [(NotificationRequest, String)] = [
            (request(alert: .init(image: "i"), payloadJSON: payload), "alert"),
            (request(sound: "s", payloadJSON: payload), "sound"),
            (request(dataJSON: "{}", payloadJSON: payload), "data_json"),
            (request(payloadJSON: payload, pushType: .alert), "push_type"),
            (request(payloadJSON: payload, priority: 5), "priority"),
            (request(payloadJSON: payload, expiration: Self.now + 1), "expiration"),
            (request(payloadJSON: payload, collapseID: "c"), "collapse_id"),
            (request(payloadJSON: payload, topic: "t"), "topic"),
        ]
        for (n, field) in cases {
            #expect(
                error(n)
                    == ValidationError(
                        field: "notifications[2].\(field)", message: "must be empty when payload_json is set"))
        }
    }

    @Test("size: 4096 bytes of body without the token is the limit, counted exactly")
    func size() throws {
        // {"message":{"token":""} + "}} around `payload` members: find the padding that lands on 4096.
        let frame = #"{"message":{"token":"","data":{"k":""}}}"#.utf8.count
        let fits = String(repeating: "a", count: FCMMessageRules.maxBodyBytes - frame)
        let prepared = try prepare(request(payloadJSON: #"{"data":{"k":""# + fits + #""}}"#))
        #expect(prepared.bodyPrefix.count + prepared.bodySuffix.count == 4096)
        let over = error(request(payloadJSON: #"{"data":{"k":""# + fits + #"a"}}"#))
        #expect(over?.field == "notifications[2].payload_json")
        #expect(over?.message.contains("4097 bytes") == true)
        // Built from fields, the notification itself is blamed.
        let built = error(request(dataJSON: #"{"k":""# + String(repeating: "b", count: 4096) + #""}"#))
        #expect(built?.field == "notifications[2]")
        #expect(built?.message.contains("over the FCM limit of 4096 bytes") == true)
    }

    @Test("a long token does not count toward the size limit")
    func sizeExcludesToken() throws {
        let long = String(repeating: "t", count: 4000)
        let prepared = try prepare(request(alert: .init(title: String(repeating: "x", count: 3000)), tokens: [long]))
        #expect(prepared.body(token: long).count > 4096)
    }
}
