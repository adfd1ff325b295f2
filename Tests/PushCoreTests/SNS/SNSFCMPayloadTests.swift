import Testing

@testable import PushCore

@Suite("SNS → FCM message")
struct SNSFCMPayloadTests {
    static let ttlName = "AWS.SNS.MOBILE.FCM.TTL"
    static let token = "fcm:tok"

    /// A `json` message with a `GCM` entry holding `gcm` (raw JSON, escaped here) and a default.
    func message(gcm: String?, defaultText: String? = "d") throws -> SNSMessage {
        var members: [(String, JSONValue)] = []
        if let defaultText { members.append(("default", .string(defaultText))) }
        if let gcm { members.append(("GCM", .string(gcm))) }
        let json = String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self)
        let target: SNSTarget = defaultText == nil ? .endpoint(.gcm) : .topic
        return try SNSMessage.parse(message: json, structure: "json", target: target, attributes: [:])
    }

    func build(
        _ message: SNSMessage, attributes: [String: String] = [:], publishedAt: Int64 = 1_000, now: Int64 = 1_000
    ) throws(ValidationError) -> PreparedFCMMessage? {
        try SNSFCMPayload.build(message: message, attributes: attributes, publishedAt: publishedAt, now: now)
    }

    func error(_ message: SNSMessage, attributes: [String: String] = [:]) -> ValidationError? {
        do throws(ValidationError) {
            _ = try build(message, attributes: attributes)
            return nil
        } catch {
            return error
        }
    }

    func body(_ prepared: PreparedFCMMessage?) -> String? {
        prepared.map { String(decoding: $0.body(token: Self.token), as: UTF8.self) }
    }

    func messageObject(_ prepared: PreparedFCMMessage?) throws -> JSONValue {
        let prepared = try #require(prepared)
        return try #require(try JSONParser.parse(prepared.body(token: Self.token))["message"])
    }

    @Test("only default: a data message with the text under \"default\", no tokens yet")
    func defaultOnly() throws {
        let plain = try SNSMessage.parse(message: "Hello \"you\"", structure: "", target: .topic, attributes: [:])
        let prepared = try #require(try build(plain))
        #expect(body(prepared) == #"{"message":{"token":"fcm:tok","data":{"default":"Hello \"you\""}}}"#)
        #expect(prepared.tokens.isEmpty)
        #expect(prepared.expiration == nil)
        #expect(SNSFCMPayload.defaultData(text: "x") == Array(#"{"data":{"default":"x"}}"#.utf8))
        // A json message without GCM gives Android its default text too.
        let json = try SNSMessage.parse(
            message: #"{"default":"fallback","APNS":"{\"aps\":{}}"}"#, structure: "json", target: .topic,
            attributes: [:])
        #expect(try messageObject(try build(json))["data"] == .object([("default", .string("fallback"))]))
    }

    @Test("default text becomes a data message under the key 'default'")
    func defaultData() {
        let bytes = SNSFCMPayload.defaultData(text: "Hooray! \"q\" ✓")
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"data":{"default":"Hooray! \"q\" ✓"}}"#)
    }

    @Test("fcmV1Message: the message is used as is after the token; validate_only is ignored")
    func v1() throws {
        let gcm =
            #"{"fcmV1Message":{"validate_only":false,"message":{"notification":{"title":"T"},"data":{"k":"v"},"android":{"ttl":"10023.32s"}}}}"#
        let prepared = try #require(try build(try message(gcm: gcm)))
        #expect(
            body(prepared)
                == #"{"message":{"token":"fcm:tok","notification":{"title":"T"},"data":{"k":"v"},"android":{"ttl":"10023.32s"}}}"#
        )
        #expect(prepared.expiration == Int64(1_000 + 10_024))
    }

    @Test("fcmV1Message errors name the member at fault")
    func v1Errors() throws {
        let cases: [(String, String)] = [
            (#"{"fcmV1Message":{"message":{"token":"x"}}}"#, "message.GCM.fcmV1Message.message"),
            (#"{"fcmV1Message":{"message":{"topic":"news"}}}"#, "message.GCM.fcmV1Message.message"),
            (#"{"fcmV1Message":{}}"#, "message.GCM.fcmV1Message.message"),
            (#"{"fcmV1Message":{"message":[]}}"#, "message.GCM.fcmV1Message.message"),
            (#"{"fcmV1Message":"x"}"#, "message.GCM.fcmV1Message"),
            (#"{"fcmV1Message":{"message":{"data":{"n":1}}}}"#, "message.GCM.fcmV1Message.message.data.n"),
            (
                #"{"fcmV1Message":{"message":{"android":{"ttl":"5 weeks"}}}}"#,
                "message.GCM.fcmV1Message.message.android.ttl"
            ),
        ]
        for (gcm, field) in cases {
            #expect(error(try message(gcm: gcm))?.field == field, "\(gcm)")
        }
    }

    @Test("legacy: data values are stringified, notification split between notification and android")
    func legacy() throws {
        let gcm = #"""
            {"data":{"s":"x","n":1.50,"b":true,"o":{"a":[1,"2"]},"z":null},
             "notification":{"title":"T","body":"B","image":"https://i","icon":"ic","sound":"default","tag":"t",
               "color":"#ff0000","click_action":"OPEN","body_loc_key":"BK","body_loc_args":"[\"1\",\"2\"]",
               "title_loc_key":"TK","title_loc_args":["a"],"android_channel_id":"ch"},
             "time_to_live":3600,"collapse_key":"ck","priority":"high","restricted_package_name":"com.example"}
            """#
        let m = try messageObject(try build(try message(gcm: gcm)))
        #expect(
            m["data"]
                == .object([
                    ("s", .string("x")), ("n", .string("1.50")), ("b", .string("true")),
                    ("o", .string(#"{"a":[1,"2"]}"#)), ("z", .string("null")),
                ]))
        #expect(
            m["notification"]
                == .object([("title", .string("T")), ("body", .string("B")), ("image", .string("https://i"))]))
        #expect(
            m["android"]
                == .object([
                    ("collapse_key", .string("ck")), ("priority", .string("HIGH")), ("ttl", .string("3600s")),
                    ("restricted_package_name", .string("com.example")),
                    (
                        "notification",
                        .object([
                            ("icon", .string("ic")), ("sound", .string("default")), ("tag", .string("t")),
                            ("color", .string("#ff0000")), ("click_action", .string("OPEN")),
                            ("body_loc_key", .string("BK")), ("body_loc_args", .array([.string("1"), .string("2")])),
                            ("title_loc_key", .string("TK")), ("title_loc_args", .array([.string("a")])),
                            ("channel_id", .string("ch")),
                        ])
                    ),
                ]))
        #expect(m["apns"] == nil)
    }

    @Test("legacy priority normal, and the iOS flags become aps keys")
    func legacyFlags() throws {
        let gcm = #"{"priority":"normal","content_available":true,"mutable_content":false,"data":{"k":"v"}}"#
        let m = try messageObject(try build(try message(gcm: gcm)))
        #expect(m["android"] == .object([("priority", .string("NORMAL"))]))
        #expect(m["apns"] == .object([("payload", .object([("aps", .object([("content-available", .number("1"))]))]))]))
        // An empty legacy object is an empty message, as SNS would send it.
        #expect(body(try build(try message(gcm: "{}"))) == #"{"message":{"token":"fcm:tok"}}"#)
    }

    @Test("legacy errors name the member at fault")
    func legacyErrors() throws {
        let cases: [(String, String)] = [
            (#"{"to":"abc"}"#, "message.GCM.to"),
            (#"{"registration_ids":["a"]}"#, "message.GCM.registration_ids"),
            (#"{"dry_run":true}"#, "message.GCM.dry_run"),
            (#"{"data":[]}"#, "message.GCM.data"),
            (#"{"data":{"google.x":"1"}}"#, "message.GCM.data.google.x"),
            (#"{"data":{"from":"1"}}"#, "message.GCM.data.from"),
            (#"{"notification":"x"}"#, "message.GCM.notification"),
            (#"{"notification":{"badge":"1"}}"#, "message.GCM.notification.badge"),
            (#"{"notification":{"title":1}}"#, "message.GCM.notification.title"),
            (#"{"notification":{"title":["a"]}}"#, "message.GCM.notification.title"),
            (#"{"notification":{"body_loc_args":"nope"}}"#, "message.GCM.notification.body_loc_args"),
            (#"{"notification":{"body_loc_args":[1]}}"#, "message.GCM.notification.body_loc_args"),
            (#"{"time_to_live":"60"}"#, "message.GCM.time_to_live"),
            (#"{"time_to_live":-1}"#, "message.GCM.time_to_live"),
            (#"{"time_to_live":1.5}"#, "message.GCM.time_to_live"),
            (#"{"time_to_live":2419201}"#, "message.GCM.time_to_live"),
            (#"{"priority":"HIGH"}"#, "message.GCM.priority"),
            (#"{"collapse_key":1}"#, "message.GCM.collapse_key"),
            (#"{"content_available":1}"#, "message.GCM.content_available"),
        ]
        for (gcm, field) in cases {
            #expect(error(try message(gcm: gcm))?.field == field, "\(gcm)")
        }
        #expect(error(try message(gcm: #"{"time_to_live":2419200}"#)) == nil)
    }

    @Test("the FCM TTL attribute wins over the payload's TTL and becomes what remains")
    func ttlPrecedence() throws {
        let legacy = try message(gcm: #"{"time_to_live":100,"data":{"k":"v"}}"#)
        let prepared = try #require(try build(legacy, attributes: [Self.ttlName: "60"], publishedAt: 1_000, now: 1_010))
        #expect(try messageObject(prepared)["android"]?["ttl"] == .string("50s"))
        #expect(prepared.expiration == 1_060)
        let v1 = try message(gcm: #"{"fcmV1Message":{"message":{"android":{"ttl":"9s","priority":"HIGH"}}}}"#)
        let rewritten = try #require(try build(v1, attributes: [Self.ttlName: "600"]))
        #expect(
            try messageObject(rewritten)["android"]
                == .object([("ttl", .string("600s")), ("priority", .string("HIGH"))]))
        // A TTL attribute on a message without android gets one.
        let plain = try #require(try build(try message(gcm: nil), attributes: [Self.ttlName: "30"]))
        #expect(try messageObject(plain)["android"] == .object([("ttl", .string("30s"))]))
    }

    @Test("without the attribute the payload's TTL counts from the publish too")
    func bodyTTLDwell() throws {
        let v1 = try message(gcm: #"{"fcmV1Message":{"message":{"android":{"ttl":"100.5s"}}}}"#)
        let prepared = try #require(try build(v1, publishedAt: 1_000, now: 1_040))
        #expect(try messageObject(prepared)["android"]?["ttl"] == .string("60.5s"))
        #expect(prepared.expiration == Int64(1_040 + 61))
        #expect(try build(v1, publishedAt: 1_000, now: 1_101) == nil)
        let legacy = try message(gcm: #"{"time_to_live":10}"#)
        #expect(try build(legacy, publishedAt: 1_000, now: 1_011) == nil)
        #expect(try build(legacy, publishedAt: 1_000, now: 1_010) != nil)
    }

    @Test("an expired TTL attribute drops the message; TTL 0 is never expired")
    func expired() throws {
        let m = try message(gcm: #"{"data":{"k":"v"}}"#)
        #expect(try build(m, attributes: [Self.ttlName: "60"], publishedAt: 1_000, now: 1_061) == nil)
        #expect(try build(m, attributes: [Self.ttlName: "60"], publishedAt: 1_000, now: 1_060) != nil)
        let zero = try #require(try build(m, attributes: [Self.ttlName: "0"], publishedAt: 1_000, now: 5_000))
        #expect(try messageObject(zero)["android"]?["ttl"] == .string("0s"))
        #expect(zero.expiration == 5_000)
        // The attribute wins even when the payload's own TTL has long run out.
        let short = try message(gcm: #"{"time_to_live":1}"#)
        #expect(try build(short, attributes: [Self.ttlName: "100"], publishedAt: 1_000, now: 1_050) != nil)
    }

    @Test("an attribute TTL beyond 4 weeks is clamped to FCM's maximum")
    func ttlClamp() throws {
        let prepared = try #require(try build(try message(gcm: "{}"), attributes: [Self.ttlName: "99999999"]))
        #expect(try messageObject(prepared)["android"]?["ttl"] == .string("2419200s"))
        #expect(prepared.expiration == Int64(1_000 + 2_419_200))
    }

    @Test("bad attributes fail with the attribute named, before the expiry test")
    func badAttributes() throws {
        let m = try message(gcm: "{}")
        #expect(error(m, attributes: [Self.ttlName: "-1"])?.field == #"attributes["AWS.SNS.MOBILE.FCM.TTL"]"#)
        #expect(
            error(m, attributes: ["AWS.SNS.MOBILE.APNS.PRIORITY": "7"])?.field
                == #"attributes["AWS.SNS.MOBILE.APNS.PRIORITY"]"#)
    }

    @Test("over 4096 bytes fails naming message.GCM, even when expired")
    func size() throws {
        let big = try message(gcm: #"{"data":{"k":""# + String(repeating: "x", count: 4096) + #""}}"#)
        let e = error(big)
        #expect(e?.field == "message.GCM")
        #expect(e?.message.contains("over the FCM limit of 4096 bytes") == true)
        #expect(throws: ValidationError.self) {
            try SNSFCMPayload.build(message: big, attributes: [Self.ttlName: "1"], publishedAt: 0, now: 1_000)
        }
        let bigDefault = try SNSMessage.parse(
            message: String(repeating: "y", count: 4096), structure: "", target: .topic, attributes: [:])
        #expect(error(bigDefault)?.field == "message")
    }

    @Test("publish refuses a GCM value that is not a JSON object")
    func publishCheck() {
        func parseError(_ gcm: String) -> ValidationError? {
            let json = String(
                decoding: JSONWriter.encode(.object([("default", .string("d")), ("GCM", .string(gcm))])), as: UTF8.self)
            do throws(ValidationError) {
                _ = try SNSMessage.parse(message: json, structure: "json", target: .topic, attributes: [:])
                return nil
            } catch {
                return error
            }
        }
        #expect(parseError("[]")?.field == "message.GCM")
        #expect(parseError("[]")?.message.hasPrefix("must be a JSON object") == true)
        #expect(parseError("")?.field == "message.GCM")
        #expect(parseError("{\"data\":")?.message.hasPrefix("is not valid JSON") == true)
        #expect(parseError("\"text\"")?.field == "message.GCM")
        #expect(parseError(#"{"data":{}}"#) == nil)
    }
}
