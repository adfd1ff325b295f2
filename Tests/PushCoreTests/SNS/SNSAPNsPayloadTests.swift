import Testing

@testable import PushCore

@Suite("SNS → APNs payload")
struct SNSAPNsPayloadTests {
    static let bundle = "com.example.app"

    func message(_ json: String, target: SNSTarget = .topic) throws -> SNSMessage {
        try SNSMessage.parse(message: json, structure: "json", target: target, attributes: [:])
    }

    func build(
        _ message: SNSMessage, _ key: PlatformKey = .apns, _ options: SNSDeliveryOptions = .init(),
        bundleID: String = bundle, publishedAt: Int64 = 1_000, now: Int64 = 1_000
    ) throws(ValidationError) -> PreparedNotification? {
        try SNSAPNsPayload.build(
            message: message, key: key, options: options, bundleID: bundleID, publishedAt: publishedAt, now: now)
    }

    func error(
        _ message: SNSMessage, _ key: PlatformKey = .apns, _ options: SNSDeliveryOptions = .init(),
        bundleID: String = bundle
    )
        -> ValidationError?
    {
        do throws(ValidationError) {
            _ = try build(message, key, options, bundleID: bundleID)
            return nil
        } catch {
            return error
        }
    }

    func text(_ n: PreparedNotification?) -> String? { n.map { String(decoding: $0.payload, as: UTF8.self) } }

    @Test("the seed message's APNS value is sent verbatim to APNS")
    func seedAPNS() throws {
        let n = try #require(try build(try message(SNSMessageTests.seed), .apns))
        #expect(text(n) == #"{"aps":{"alert":"Hi","badge":0,"sound":"bingbong.aiff"}}"#)
        #expect(n.pushType == .alert)
        #expect(n.priority == 10)
        #expect(n.topic == Self.bundle)
        #expect(n.expiration == nil)
        #expect(n.collapseID == nil)
        #expect(n.apnsID == nil)
        #expect(n.tokens.isEmpty)
    }

    @Test("the seed message gives APNS_SANDBOX the default-built payload")
    func seedSandbox() throws {
        let n = try #require(try build(try message(SNSMessageTests.seed), .apnsSandbox))
        #expect(text(n) == #"{"aps":{"alert":"Hooray!"}}"#)
        #expect(n.pushType == .alert)
    }

    @Test("verbatim means verbatim: whitespace and number spelling are kept")
    func verbatim() throws {
        let apns = #"{ \"aps\" : {\"badge\": 1.0} , \"x\": 1e2 }"#
        let n = try build(try message(#"{"default":"d","APNS":""# + apns + #""}"#))
        #expect(text(n) == #"{ "aps" : {"badge": 1.0} , "x": 1e2 }"#)
    }

    @Test("default text is JSON-escaped: quotes, backslashes, control characters; Unicode as is")
    func escaping() throws {
        let plain = try SNSMessage.parse(
            message: "He said \"hi\" \\ ✓ 🎉\n\u{01}", structure: "", target: .topic, attributes: [:])
        #expect(text(try build(plain)) == #"{"aps":{"alert":"He said \"hi\" \\ ✓ 🎉\n\u0001"}}"#)
        let json = try message(#"{"default":"caf\u00e9 \"q\""}"#)
        #expect(text(try build(json)) == #"{"aps":{"alert":"café \"q\""}}"#)
    }

    @Test("a direct endpoint publish with only APNS works")
    func endpointOnlyAPNS() throws {
        let n = try build(try message(#"{"APNS":"{\"aps\":{\"alert\":\"x\"}}"}"#, target: .endpoint(.apns)))
        #expect(text(n) == #"{"aps":{"alert":"x"}}"#)
    }

    @Test("a platform value that is not a JSON object is refused, naming message")
    func platformValueNotObject() throws {
        #expect(
            error(try message(#"{"default":"d","APNS":"[1]"}"#))
                == ValidationError(field: "message", message: "the 'APNS' value must be a JSON object"))
        #expect(
            error(try message(#"{"default":"d","APNS_SANDBOX":"{\"aps\":"}"#), .apnsSandbox)
                == ValidationError(
                    field: "message",
                    message: "the 'APNS_SANDBOX' value is not valid JSON: unexpected end of input at byte 7"))
        #expect(
            error(try message(#"{"default":"d","APNS":""}"#))?.message.hasPrefix("the 'APNS' value is not valid JSON")
                == true)
    }

    @Test("a message with no entry for the key is refused")
    func noEntry() throws {
        let only = try message(#"{"APNS":"{}"}"#, target: .endpoint(.apns))
        #expect(error(only, .apnsSandbox)?.message == "JSON must contain an entry for 'default' or 'APNS_SANDBOX'")
    }

    @Test(
        "push type inference follows SNS (C.5)",
        arguments: [
            (#"{"aps":{"content-available":1}}"#, PushType.background),
            (#"{"aps":{"content-available":true}}"#, .background),
            (#"{"aps":{"content-available":1},"custom":{"k":1}}"#, .background),
            (#"{"aps":{"content-available":1,"thread-id":"t"}}"#, .background),
            (#"{"aps":{"content-available":1,"badge":3}}"#, .alert),
            (#"{"aps":{"content-available":1,"sound":"default"}}"#, .alert),
            (#"{"aps":{"alert":"a","content-available":1}}"#, .alert),
            (#"{"aps":{"content-available":0}}"#, .alert),
            (#"{"aps":{"content-available":false}}"#, .alert),
            (#"{"aps":{"content-available":"1"}}"#, .alert),
            (#"{"aps":{"content-available":1.0}}"#, .alert),
            (#"{"aps":{}}"#, .alert),
            (#"{"custom":1}"#, .alert),
            (#"{"aps":"x"}"#, .alert),
        ])
    func inference(payload: String, expected: PushType) throws {
        #expect(SNSPushTypeInference.infer(fromPayload: try JSONParser.parse(payload.utf8)) == expected)
    }

    @Test("content-available 1 alone is background at priority 5; with a badge, alert at 10")
    func backgroundPriority() throws {
        let background = try #require(
            try build(try message(#"{"default":"d","APNS":"{\"aps\":{\"content-available\":1}}"}"#)))
        #expect(background.pushType == .background)
        #expect(background.priority == 5)
        let custom = try build(try message(#"{"default":"d","APNS":"{\"aps\":{\"content-available\":1},\"id\":7}"}"#))
        #expect(custom?.pushType == .background)
        let badge = try #require(
            try build(try message(#"{"default":"d","APNS":"{\"aps\":{\"content-available\":1,\"badge\":1}}"}"#)))
        #expect(badge.pushType == .alert)
        #expect(badge.priority == 10)
    }

    @Test("attributes set push type, priority, topic and collapse id")
    func attributes() throws {
        let options = SNSDeliveryOptions(pushType: .voip, priority: 5, topic: "com.other.voip", collapseID: "c1")
        let n = try #require(try build(try message(SNSMessageTests.seed), .apns, options))
        #expect(n.pushType == .voip)
        #expect(n.priority == 5)
        #expect(n.topic == "com.other.voip")
        #expect(n.collapseID == "c1")
    }

    @Test("the topic defaults to the bundle id plus the push type's suffix")
    func topicSuffix() throws {
        let n = try build(try message(SNSMessageTests.seed), .apns, SNSDeliveryOptions(pushType: .liveactivity))
        #expect(n?.topic == "com.example.app.push-type.liveactivity")
    }

    @Test("topic errors name the TOPIC attribute")
    func topicErrors() throws {
        let seed = try message(SNSMessageTests.seed)
        let field = #"attributes["AWS.SNS.MOBILE.APNS.TOPIC"]"#
        #expect(
            error(seed, .apns, SNSDeliveryOptions(pushType: .mdm))
                == ValidationError(field: field, message: "must be set for push type mdm (the MDM certificate's UID)"))
        #expect(
            error(seed, bundleID: "")
                == ValidationError(field: field, message: "no topic: set this attribute or the app's bundle_id"))
        #expect(try build(seed, .apns, SNSDeliveryOptions(topic: "com.x"), bundleID: "")?.topic == "com.x")
    }

    @Test("priority 10 on a background push is refused, naming the PRIORITY attribute")
    func backgroundPriority10() throws {
        let background = try message(#"{"default":"d","APNS":"{\"aps\":{\"content-available\":1}}"}"#)
        #expect(
            error(background, .apns, SNSDeliveryOptions(priority: 10))
                == ValidationError(
                    field: #"attributes["AWS.SNS.MOBILE.APNS.PRIORITY"]"#,
                    message: "priority 10 is not allowed for background pushes"))
        #expect(try build(background, .apns, SNSDeliveryOptions(priority: 1))?.priority == 1)
    }

    @Test("TTL sets an absolute expiration counted from publish time")
    func ttlFromPublish() throws {
        let seed = try message(SNSMessageTests.seed)
        let options = SNSDeliveryOptions(ttlSeconds: 60)
        #expect(try build(seed, .apns, options, publishedAt: 1_000, now: 1_000)?.expiration == 1_060)
        // 50 s spent queued leaves 10 s: the expiration doesn't move with `now`.
        #expect(try build(seed, .apns, options, publishedAt: 1_000, now: 1_050)?.expiration == 1_060)
        #expect(try build(seed, .apns, options, publishedAt: 1_000, now: 1_060)?.expiration == 1_060)
    }

    @Test("a message whose TTL has run out is dropped (nil)")
    func ttlExpired() throws {
        let seed = try message(SNSMessageTests.seed)
        #expect(try build(seed, .apns, SNSDeliveryOptions(ttlSeconds: 60), publishedAt: 1_000, now: 1_061) == nil)
    }

    @Test("TTL 0 sends apns-expiration 0 and is never dropped for dwell time")
    func ttlZero() throws {
        let seed = try message(SNSMessageTests.seed)
        let n = try build(seed, .apns, SNSDeliveryOptions(ttlSeconds: 0), publishedAt: 1_000, now: 5_000)
        #expect(n?.expiration == 0)
    }

    @Test("no TTL sends no expiration header, however late")
    func noTTL() throws {
        let n = try build(try message(SNSMessageTests.seed), publishedAt: 0, now: Int64.max)
        #expect(n != nil)
        #expect(n?.expiration == nil)
    }

    @Test("a huge TTL saturates instead of overflowing")
    func hugeTTL() throws {
        let n = try build(try message(SNSMessageTests.seed), .apns, SNSDeliveryOptions(ttlSeconds: Int64.max))
        #expect(n?.expiration == Int64.max)
    }

    @Test("validation errors win over expiry")
    func errorsBeforeExpiry() throws {
        let bad = try message(#"{"default":"d","APNS":"[]"}"#)
        #expect(throws: ValidationError.self) {
            try build(bad, .apns, SNSDeliveryOptions(ttlSeconds: 1), publishedAt: 0, now: 100)
        }
    }

    @Test("the payload limit depends on the push type")
    func sizeLimit() throws {
        let long = String(repeating: "a", count: 4096 - #"{"aps":{"alert":""}}"#.utf8.count)
        let fits = try SNSMessage.parse(message: long, structure: "", target: .topic, attributes: [:])
        #expect(try build(fits)?.payload.count == 4096)
        let over = try SNSMessage.parse(message: long + "a", structure: "", target: .topic, attributes: [:])
        #expect(
            error(over)
                == ValidationError(
                    field: "message",
                    message:
                        "the APNs payload for 'APNS' is 4097 bytes, over the limit of 4096 bytes for push type alert"))
        #expect(try build(over, .apns, SNSDeliveryOptions(pushType: .voip))?.payload.count == 4097)
    }
}
