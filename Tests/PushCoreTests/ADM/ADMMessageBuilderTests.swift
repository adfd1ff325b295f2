import Testing

@testable import PushCore

@Suite("ADM message builder")
struct ADMMessageBuilderTests {
    static let token = "amzn1.adm-registration.v3.Y29tLmFtYXpvbi5E"
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
            app: "fire", tokens: tokens, alert: alert, badge: badge, sound: sound, category: category,
            threadID: threadID, contentAvailable: contentAvailable, mutableContent: mutableContent,
            interruptionLevel: interruptionLevel, dataJSON: dataJSON, payloadJSON: payloadJSON, pushType: pushType,
            priority: priority, expiration: expiration, collapseID: collapseID, topic: topic, id: id)
    }

    func prepare(_ n: NotificationRequest) throws -> PreparedADMMessage {
        try ADMMessageBuilder.prepare(n, at: Self.path, now: Self.now).get()
    }

    func body(_ n: NotificationRequest) throws -> String {
        String(decoding: try prepare(n).body, as: UTF8.self)
    }

    func error(_ n: NotificationRequest) -> ValidationError? {
        if case .failure(let error) = ADMMessageBuilder.prepare(n, at: Self.path, now: Self.now) { return error }
        return nil
    }

    // MARK: Mapping

    @Test("a plain alert becomes data.title and data.body, exact bytes, no expiry")
    func plainAlert() throws {
        let n = request(alert: .init(title: "Hi", body: "There"), tokens: [Self.token, "reg-2"])
        let prepared = try prepare(n)
        #expect(String(decoding: prepared.body, as: UTF8.self) == #"{"data":{"title":"Hi","body":"There"}}"#)
        #expect(prepared.tokens == [Self.token, "reg-2"])
        #expect(prepared.expiration == nil)
    }

    @Test("every mapped field, in order: alert, badge, sound, data_json, consolidationKey, expiresAfter")
    func fullMapping() throws {
        let n = request(
            alert: .init(title: "T", body: "B \"q\" ✓", image: "https://i/x.png"), badge: 7, sound: "ping.mp3",
            dataJSON: #"{"z":"1","a":""}"#, expiration: Self.now + 3600, collapseID: "news")
        let prepared = try prepare(n)
        #expect(
            String(decoding: prepared.body, as: UTF8.self)
                == #"{"data":{"title":"T","body":"B \"q\" ✓","image":"https://i/x.png","badge":"7","sound":"ping.mp3","#
                + #""z":"1","a":""},"consolidationKey":"news","expiresAfter":3600}"#)
        #expect(prepared.expiration == Self.now + 3600)
    }

    @Test("badge 0 is sent as \"0\" (it clears); an unset badge and empty alert fields are left out")
    func badgeAndOmissions() throws {
        #expect(try body(request(badge: 0)) == #"{"data":{"badge":"0"}}"#)
        #expect(try body(request(alert: .init(body: "only body"))) == #"{"data":{"body":"only body"}}"#)
        #expect(try body(request(alert: .init(), sound: "default")) == #"{"data":{"sound":"default"}}"#)
    }

    @Test("data_json alone is a data message, keys in their own order")
    func dataOnly() throws {
        #expect(try body(request(dataJSON: #"{"b":"2","a":"1"}"#)) == #"{"data":{"b":"2","a":"1"}}"#)
    }

    @Test("content_available alone is an empty sync message; with collapse_id it consolidates")
    func sync() throws {
        #expect(try body(request(contentAvailable: true)) == #"{"data":{}}"#)
        #expect(
            try body(request(contentAvailable: true, collapseID: "Sync")) == #"{"data":{},"consolidationKey":"Sync"}"#)
        // content_available next to content adds nothing.
        #expect(try body(request(contentAvailable: true, dataJSON: #"{"k":"v"}"#)) == #"{"data":{"k":"v"}}"#)
    }

    @Test("expiration becomes expiresAfter from now, clamped to 1 second ... 30 days")
    func expiresAfter() throws {
        let cases: [(Int64, Int64)] = [
            (Self.now + 1, 1), (Self.now + 86_400, 86_400), (Self.now + 2_592_000, 2_592_000),
            (Self.now + 2_592_001, 2_592_000), (Self.now + 400 * 86_400, 2_592_000),
            (Self.now, 1), (Self.now - 60, 1), (1, 1),
        ]
        for (expiration, seconds) in cases {
            let prepared = try prepare(request(alert: .init(title: "t"), expiration: expiration))
            #expect(
                String(decoding: prepared.body, as: UTF8.self)
                    == #"{"data":{"title":"t"},"expiresAfter":"# + String(seconds) + "}", "\(expiration)")
            #expect(prepared.expiration == Self.now + seconds, "\(expiration)")
        }
    }

    @Test("priority is ignored (ADM has none) but must still be a valid value")
    func priority() throws {
        for p: Int32 in [1, 5, 10] {
            #expect(try body(request(alert: .init(title: "t"), priority: p)) == #"{"data":{"title":"t"}}"#)
        }
        #expect(
            error(request(alert: .init(title: "t"), priority: 3))
                == ValidationError(field: "notifications[2].priority", message: "must be 0, 1, 5 or 10"))
    }

    // MARK: Errors

    @Test("tokens: at least one, each an ADM registration id")
    func tokens() {
        #expect(
            error(request(alert: .init(title: "t"), tokens: []))
                == ValidationError(field: "notifications[2].tokens", message: "at least one token is required"))
        let bad = error(request(alert: .init(title: "t"), tokens: [Self.token, "a/b"]))
        #expect(bad?.field == "notifications[2].tokens[1]")
        #expect(bad?.message.contains(ADMRegistrationID.requirement) == true)
        // An APNs hex token is a fine ADM id shape; an FCM token with ':' is not.
        #expect(error(request(alert: .init(title: "t"), tokens: ["fcm:APA91b"]))?.field == "notifications[2].tokens[0]")
    }

    @Test("nothing to deliver is an error about the notification itself")
    func nothingToSend() {
        for n in [request(), request(alert: .init()), request(dataJSON: "{}"), request(collapseID: "k")] {
            let e = error(n)
            #expect(e?.field == "notifications[2]")
            #expect(e?.message.hasPrefix("notification has nothing to send") == true)
        }
    }

    @Test("fields ADM cannot carry are refused by name")
    func uncarried() {
        let cases: [(NotificationRequest, String)] = [
            (request(alert: .init(title: "t"), id: "6a1f3c4e-1b2a-4c5d-8e9f-0a1b2c3d4e5f"), "id"),
            (request(alert: .init(title: "t"), topic: "com.example"), "topic"),
            (request(alert: .init(title: "t"), pushType: .alert), "push_type"),
            (request(contentAvailable: true, pushType: .background), "push_type"),
            (request(alert: .init(title: "t", subtitle: "s")), "alert.subtitle"),
            (request(alert: .init(title: "t", launchImage: "l.png")), "alert.launch_image"),
            (request(alert: .init(titleLocKey: "K")), "alert.title_loc_key"),
            (request(alert: .init(titleLocArgs: ["a"])), "alert.title_loc_args"),
            (request(alert: .init(locKey: "K")), "alert.loc_key"),
            (request(alert: .init(locArgs: ["a"])), "alert.loc_args"),
            (request(alert: .init(title: "t"), threadID: "th"), "thread_id"),
            (request(alert: .init(title: "t"), category: "c"), "category"),
            (request(alert: .init(title: "t"), mutableContent: true), "mutable_content"),
            (request(alert: .init(title: "t"), interruptionLevel: "active"), "interruption_level"),
        ]
        for (n, field) in cases {
            let e = error(n)
            #expect(e?.field == "notifications[2].\(field)", "\(field)")
            #expect(e?.message.hasPrefix("cannot be sent to ADM: ") == true, "\(field)")
        }
        // An invalid interruption level fails its own check first.
        #expect(
            error(request(alert: .init(title: "t"), interruptionLevel: "loud"))?.message
                == "must be passive, active, time-sensitive or critical")
    }

    @Test("data_json must be an object of strings; errors name the member")
    func dataJSONErrors() {
        let cases: [(String, String, String)] = [
            (
                #"{"n":1}"#, "data_json.n",
                "must be a JSON string: ADM data values are strings (quote numbers and booleans)"
            ),
            (
                #"{"o":{"a":"b"}}"#, "data_json.o",
                "must be a JSON string: ADM data values are strings (quote numbers and booleans)"
            ),
            (#"["a"]"#, "data_json", "must be a JSON object of strings"),
            (#""text""#, "data_json", "must be a JSON object of strings"),
        ]
        for (json, field, message) in cases {
            #expect(
                error(request(dataJSON: json)) == ValidationError(field: "notifications[2].\(field)", message: message))
        }
        #expect(error(request(dataJSON: #"{"a":"#))?.field == "notifications[2].data_json")
        #expect(error(request(dataJSON: #"{"a":"1","a":"2"}"#))?.field == "notifications[2].data_json")
    }

    @Test("a data_json key that a mapped field also writes is a conflict, not an overwrite")
    func conflicts() {
        let cases: [(NotificationRequest, String, String)] = [
            (request(alert: .init(title: "t"), dataJSON: #"{"title":"x"}"#), "title", "alert.title"),
            (request(alert: .init(body: "b"), dataJSON: #"{"k":"v","body":"x"}"#), "body", "alert.body"),
            (request(alert: .init(image: "i"), dataJSON: #"{"image":"x"}"#), "image", "alert.image"),
            (request(badge: 1, dataJSON: #"{"badge":"2"}"#), "badge", "badge"),
            (request(sound: "s", dataJSON: #"{"sound":"x"}"#), "sound", "sound"),
        ]
        for (n, key, source) in cases {
            #expect(
                error(n)
                    == ValidationError(
                        field: "notifications[2].data_json.\(key)",
                        message: "conflicts with \(source), which ADM receives as data.\(key)"))
        }
        // Without the mapped field the key is the caller's to use.
        #expect(error(request(dataJSON: #"{"title":"x","badge":"3"}"#)) == nil)
    }

    @Test("scalar checks shared with APNs: badge, expiration, collapse_id")
    func scalars() {
        let cases: [(NotificationRequest, String)] = [
            (request(badge: -1), "badge"),
            (request(alert: .init(title: "t"), expiration: -5), "expiration"),
            (request(alert: .init(title: "t"), collapseID: String(repeating: "k", count: 65)), "collapse_id"),
            (request(alert: .init(title: "t"), collapseID: "a\nb"), "collapse_id"),
        ]
        for (n, field) in cases {
            #expect(error(n)?.field == "notifications[2].\(field)", "\(field)")
        }
        #expect(error(request(alert: .init(title: "t"), collapseID: String(repeating: "k", count: 64))) == nil)
    }

    // MARK: payload_json

    @Test("payload_json is the whole body, re-serialised compactly in its own order")
    func payloadJSON() throws {
        let payload = #"{ "expiresAfter" : 86400, "data" : {"k" : "v"}, "consolidationKey" : "ck", "md5" : "abc=" }"#
        let prepared = try prepare(request(payloadJSON: payload))
        #expect(
            String(decoding: prepared.body, as: UTF8.self)
                == #"{"expiresAfter":86400,"data":{"k":"v"},"consolidationKey":"ck","md5":"abc="}"#)
        #expect(prepared.expiration == Self.now + 86_400)
        #expect(try prepare(request(payloadJSON: #"{"data":{}}"#)).expiration == nil)
        // ADM's own bounds are accepted; an empty object is ADM's business.
        #expect(error(request(payloadJSON: #"{"data":{},"expiresAfter":1}"#)) == nil)
        #expect(error(request(payloadJSON: #"{"data":{},"expiresAfter":2592000}"#)) == nil)
        #expect(error(request(payloadJSON: "{}")) == nil)
    }

    @Test("payload_json errors name the member at fault")
    func payloadJSONErrors() {
        let cases: [(String, String)] = [
            ("[]", "payload_json"),
            (#""data""#, "payload_json"),
            ("{", "payload_json"),
            (#"{"data":{"n":2}}"#, "payload_json.data.n"),
            (#"{"data":[]}"#, "payload_json.data"),
            (#"{"data":{},"notification":{"title":"t"}}"#, "payload_json.notification"),
            (#"{"data":{},"registration_id":"x"}"#, "payload_json.registration_id"),
            (#"{"consolidationKey":5}"#, "payload_json.consolidationKey"),
            (#"{"consolidationKey":""# + String(repeating: "k", count: 65) + #""}"#, "payload_json.consolidationKey"),
            (#"{"consolidationKey":"a\u0001"}"#, "payload_json.consolidationKey"),
            (#"{"expiresAfter":0}"#, "payload_json.expiresAfter"),
            (#"{"expiresAfter":2592001}"#, "payload_json.expiresAfter"),
            (#"{"expiresAfter":-1}"#, "payload_json.expiresAfter"),
            (#"{"expiresAfter":60.5}"#, "payload_json.expiresAfter"),
            (#"{"expiresAfter":6e1}"#, "payload_json.expiresAfter"),
            (#"{"expiresAfter":"60"}"#, "payload_json.expiresAfter"),
            (#"{"expiresAfter":99999999999999999999999}"#, "payload_json.expiresAfter"),
            (#"{"md5":1}"#, "payload_json.md5"),
        ]
        for (payload, field) in cases {
            #expect(error(request(payloadJSON: payload))?.field == "notifications[2].\(field)", "\(payload)")
        }
        #expect(
            error(request(payloadJSON: #"{"ttl":1}"#))?.message
                == "is not an ADM message field (data, consolidationKey, expiresAfter, md5)")
        #expect(
            error(request(payloadJSON: #"{"expiresAfter":0}"#))?.message
                == "must be a whole number of seconds from 1 to 2592000 (30 days)")
    }

    @Test("with payload_json the body-building fields must be empty")
    func payloadJSONExclusive() {
        let payload = #"{"data":{"k":"v"}}"#
        let cases: [(NotificationRequest, String)] = [
            (request(alert: .init(title: "t"), payloadJSON: payload), "alert"),
            (request(badge: 0, payloadJSON: payload), "badge"),
            (request(sound: "s", payloadJSON: payload), "sound"),
            (request(contentAvailable: true, payloadJSON: payload), "content_available"),
            (request(dataJSON: "{}", payloadJSON: payload), "data_json"),
            (request(payloadJSON: payload, expiration: Self.now + 10), "expiration"),
            (request(payloadJSON: payload, collapseID: "c"), "collapse_id"),
        ]
        for (n, field) in cases {
            #expect(
                error(n)
                    == ValidationError(
                        field: "notifications[2].\(field)", message: "must be empty when payload_json is set"))
        }
        // Priority means nothing to ADM either way.
        #expect(error(request(payloadJSON: payload, priority: 10)) == nil)
    }

    // MARK: Size

    @Test("size: 6144 bytes of body is the limit, counted exactly on the compact JSON")
    func size() throws {
        let frame = #"{"data":{"k":""}}"#.utf8.count
        let fits = String(repeating: "a", count: ADMMessageRules.maxBodyBytes - frame)
        let prepared = try prepare(request(payloadJSON: #"{ "data" : { "k" : ""# + fits + #"" } }"#))
        #expect(prepared.body.count == 6144)
        let over = error(request(payloadJSON: #"{"data":{"k":""# + fits + #"a"}}"#))
        #expect(
            over
                == ValidationError(
                    field: "notifications[2].payload_json",
                    message: "the ADM message is 6145 bytes, over the ADM limit of 6144 bytes"))
        // Built from fields: the same limit, the notification itself blamed.
        #expect(try prepare(request(dataJSON: #"{"k":""# + fits + #""}"#)).body.count == 6144)
        let built = error(request(dataJSON: #"{"k":""# + fits + #"é"}"#))
        #expect(built?.field == "notifications[2]")
        #expect(built?.message == "the ADM message is 6146 bytes, over the ADM limit of 6144 bytes")
    }

    @Test("a long registration id does not count toward the size (it goes in the path)")
    func sizeExcludesToken() throws {
        let long = String(repeating: "r", count: 2048)
        let frame = #"{"data":{"k":""}}"#.utf8.count
        let prepared = try prepare(
            request(dataJSON: #"{"k":""# + String(repeating: "a", count: 6144 - frame) + #""}"#, tokens: [long]))
        #expect(prepared.body.count == 6144)
        #expect(prepared.tokens == [long])
    }
}
