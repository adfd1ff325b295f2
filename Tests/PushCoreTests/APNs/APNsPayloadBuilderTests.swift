import Testing

@testable import PushCore

@Suite("APNsPayloadBuilder")
struct APNsPayloadBuilderTests {
    private func build(_ n: NotificationRequest) throws(ValidationError) -> String {
        String(decoding: try APNsPayloadBuilder.build(n), as: UTF8.self)
    }

    private func error(_ n: NotificationRequest) -> ValidationError? {
        do {
            _ = try APNsPayloadBuilder.build(n)
            return nil
        } catch {
            return error
        }
    }

    @Test("a full alert gives exact bytes in the documented key order")
    func fullAlert() throws {
        let alert = NotificationRequest.Alert(
            title: "Hi", subtitle: "Sub", body: "Line \"1\"\nLine 2", launchImage: "img.png", titleLocKey: "T",
            titleLocArgs: ["a", "b"], locKey: "L", locArgs: ["c"])
        let n = NotificationRequest(
            alert: alert, badge: 3, sound: "default", category: "MSG", threadID: "t-1", contentAvailable: true,
            mutableContent: true, interruptionLevel: "time-sensitive", dataJSON: #"{"z":1,"a":{"k":[true,null]}}"#)
        let expected =
            #"{"aps":{"alert":{"title":"Hi","subtitle":"Sub","body":"Line \"1\"\nLine 2","launch-image":"img.png","#
            + #""title-loc-key":"T","title-loc-args":["a","b"],"loc-key":"L","loc-args":["c"]},"badge":3,"#
            + #""sound":"default","thread-id":"t-1","category":"MSG","content-available":1,"mutable-content":1,"#
            + #""interruption-level":"time-sensitive"},"z":1,"a":{"k":[true,null]}}"#
        #expect(try build(n) == expected)
    }

    @Test("only set fields appear")
    func minimal() throws {
        #expect(try build(NotificationRequest(alert: .init(body: "Hello"))) == #"{"aps":{"alert":{"body":"Hello"}}}"#)
        #expect(try build(NotificationRequest(badge: 0)) == #"{"aps":{"badge":0}}"#)
        #expect(try build(NotificationRequest(contentAvailable: true)) == #"{"aps":{"content-available":1}}"#)
        // An alert with no fields set is no alert.
        #expect(try build(NotificationRequest(alert: .init(), sound: "s")) == #"{"aps":{"sound":"s"}}"#)
    }

    @Test("data_json keys merge at top level in their order, numbers verbatim")
    func dataMerge() throws {
        let n = NotificationRequest(alert: .init(title: "T"), dataJSON: #" { "b" : 1.50, "a" : "é\u00e9" } "#)
        #expect(try build(n) == #"{"aps":{"alert":{"title":"T"}},"b":1.50,"a":"éé"}"#)
        // Data alone is something to send; `aps` is then empty.
        #expect(try build(NotificationRequest(dataJSON: #"{"k":1}"#)) == #"{"aps":{},"k":1}"#)
    }

    @Test("data_json must be a JSON object without aps")
    func dataErrors() {
        #expect(
            error(NotificationRequest(badge: 1, dataJSON: "[1]"))
                == ValidationError(field: "data_json", message: "must be a JSON object"))
        #expect(
            error(NotificationRequest(badge: 1, dataJSON: #"{"aps":{}}"#))
                == ValidationError(
                    field: "data_json", message: #"must not contain "aps"; use the notification's fields"#))
        #expect(
            error(NotificationRequest(badge: 1, dataJSON: #"{"a":1,}"#))
                == ValidationError(field: "data_json", message: "expected a string key at byte 7"))
    }

    @Test("payload_json is used byte for byte")
    func verbatim() throws {
        let payload = #"{ "aps" : { "alert" : "\u00e9" , "badge":1.0 }, "x": [ ] }"#
        #expect(try APNsPayloadBuilder.build(NotificationRequest(payloadJSON: payload)) == Array(payload.utf8))
    }

    @Test("payload_json must be a JSON object")
    func verbatimErrors() {
        #expect(
            error(NotificationRequest(payloadJSON: "\"aps\""))
                == ValidationError(field: "payload_json", message: "must be a JSON object"))
        #expect(
            error(NotificationRequest(payloadJSON: #"{"aps":}"#))
                == ValidationError(field: "payload_json", message: "expected a value at byte 7"))
    }

    @Test(
        "payload-building fields conflict with payload_json",
        arguments: [
            (NotificationRequest(alert: .init(body: "b")), "alert"), (NotificationRequest(badge: 0), "badge"),
            (NotificationRequest(sound: "s"), "sound"), (NotificationRequest(category: "c"), "category"),
            (NotificationRequest(threadID: "t"), "thread_id"),
            (NotificationRequest(contentAvailable: true), "content_available"),
            (NotificationRequest(mutableContent: true), "mutable_content"),
            (NotificationRequest(interruptionLevel: "active"), "interruption_level"),
            (NotificationRequest(dataJSON: "{}"), "data_json"),
        ])
    func conflicts(base: NotificationRequest, field: String) {
        var n = base
        n.payloadJSON = #"{"aps":{}}"#
        #expect(error(n) == ValidationError(field: field, message: "must be empty when payload_json is set"))
    }

    @Test("an empty alert doesn't conflict with payload_json")
    func emptyAlertWithPayload() throws {
        #expect(try build(NotificationRequest(alert: .init(), payloadJSON: "{}")) == "{}")
    }

    @Test("alert.image is FCM-only: APNs leaves it out and it conflicts with nothing")
    func imageIgnored() throws {
        #expect(
            try build(NotificationRequest(alert: .init(title: "T", image: "https://i")))
                == #"{"aps":{"alert":{"title":"T"}}}"#)
        #expect(
            try build(NotificationRequest(alert: .init(image: "https://i"), sound: "s")) == #"{"aps":{"sound":"s"}}"#)
        #expect(try build(NotificationRequest(alert: .init(image: "https://i"), payloadJSON: "{}")) == "{}")
    }

    @Test("nothing to send is an error")
    func nothing() {
        let expected = ValidationError(
            field: "",
            message:
                "notification has nothing to send: set alert, badge, sound, content_available, data_json or payload_json"
        )
        #expect(error(NotificationRequest()) == expected)
        #expect(error(NotificationRequest(alert: .init(), dataJSON: "{}")) == expected)
    }

    @Test(
        "the inferred push type agrees with PushType.infer over the built bytes",
        arguments: [
            NotificationRequest(contentAvailable: true),
            NotificationRequest(contentAvailable: true, dataJSON: #"{"c":1}"#),
            NotificationRequest(badge: 1, contentAvailable: true),
            NotificationRequest(threadID: "t", contentAvailable: true),
            NotificationRequest(alert: .init(body: "b")), NotificationRequest(dataJSON: #"{"c":1}"#),
            NotificationRequest(contentAvailable: true, mutableContent: true),
            NotificationRequest(payloadJSON: #"{"aps":{"content-available":1}}"#),
            NotificationRequest(payloadJSON: #"{"aps":{"content-available":1,"sound":"x"}}"#),
        ])
    func inferenceAgrees(n: NotificationRequest) throws {
        let built = try APNsPayloadBuilder.prepare(n)
        #expect(built.inferredPushType == PushType.infer(fromPayload: try JSONParser.parse(built.bytes)))
    }
}
