import PushProto
import Testing

@Suite("Proto3 JSON: every error names the field path")
struct ProtoJSONErrorTests {
    @Test("an unknown field, at any depth, by the name the document gave it")
    func unknownField() {
        let error = jsonError(PushgateV1.SendRequest.self, #"{"notifications":[{"tokens":["a"]},{"tokenz":["a"]}]}"#)
        #expect(error?.description == "notifications[1].tokenz: unknown field")
        #expect(error?.path == "notifications[1].tokenz")
        #expect(
            jsonError(PushgateV1.SendRequest.self, #"{"notification":[]}"#)?.description
                == "notification: unknown field")
        let nested = jsonError(PushgateV1.SendRequest.self, #"{"notifications":[{"alert":{"titel":"x"}}]}"#)
        #expect(nested?.description == "notifications[0].alert.titel: unknown field")
        #expect(
            jsonError(PushgateV1.DeleteEndpointResponse.self, #"{"id":null}"#)?.description == "id: unknown field",
            "a null value is still checked for its key")
    }

    @Test("a wrong type says what was expected")
    func wrongType() {
        let cases: [(String, String)] = [
            (#"{"notifications":{}}"#, "notifications: expected an array, got an object"),
            (#"{"notifications":[{"tokens":"ab"}]}"#, "notifications[0].tokens: expected an array, got a string"),
            (
                #"{"notifications":[{"tokens":["ab",7]}]}"#,
                "notifications[0].tokens[1]: expected a string, got a number"
            ),
            (#"{"notifications":[{"tokens":[null]}]}"#, "notifications[0].tokens[0]: expected a string, got null"),
            (
                #"{"notifications":[{"alert":"hi"}]}"#,
                "notifications[0].alert: expected an object (pushgate.v1.Alert), got a string"
            ),
            (
                #"{"notifications":[null]}"#,
                "notifications[0]: expected an object (pushgate.v1.Notification), got null"
            ),
            (
                #"{"notifications":[{"contentAvailable":"true"}]}"#,
                "notifications[0].contentAvailable: expected true or false, got a string"
            ),
            (
                #"{"notifications":[{"badge":true}]}"#,
                "notifications[0].badge: expected int32 (a number or a string of digits), got a boolean"
            ),
            (
                #"{"notifications":[{"expiration":"soon"}]}"#,
                #"notifications[0].expiration: expected int64, got "soon", which is not a number"#
            ),
            (
                #"{"notifications":[{"expiration":""}]}"#,
                #"notifications[0].expiration: expected int64, got "", which is not a number"#
            ),
            (
                #"{"notifications":[{"priority":1.5}]}"#,
                #"notifications[0].priority: expected int32, got 1.5, which is not a whole number"#
            ),
            (
                #"{"notifications":[{"pushType":true}]}"#,
                "notifications[0].pushType: expected a value name or number of pushgate.v1.PushType, got a boolean"
            ),
        ]
        for (input, message) in cases {
            #expect(jsonError(PushgateV1.SendRequest.self, input)?.description == message, "\(input)")
        }
        #expect(
            jsonError(PushgateV1.SendRequest.self, "[]")?.description
                == "expected an object (pushgate.v1.SendRequest), got an array")
    }

    @Test("a bad enum name names the enum")
    func badEnumName() {
        let error = jsonError(PushgateV1.SendRequest.self, #"{"notifications":[{"push_type":"PUSH_TYPE_LOUD"}]}"#)
        #expect(
            error?.description
                == #"notifications[0].push_type: "PUSH_TYPE_LOUD" is not a value of pushgate.v1.PushType"#)
        let range = jsonError(PushgateV1.Result.self, #"{"status":4294967296}"#)
        #expect(
            range?.description
                == #"status: 4294967296 is out of range for int32 (an enum number of pushgate.v1.Status)"#)
    }

    @Test("out-of-range integers")
    func outOfRange() {
        let cases: [(String, String)] = [
            (#"{"httpStatus":2147483648}"#, #"httpStatus: 2147483648 is out of range for int32"#),
            (#"{"httpStatus":"-2147483649"}"#, #"httpStatus: "-2147483649" is out of range for int32"#),
            (
                #"{"unregisteredAt":"9223372036854775808"}"#,
                #"unregisteredAt: "9223372036854775808" is out of range for int64"#
            ),
            (#"{"unregisteredAt":1e400}"#, #"unregisteredAt: 1e400 is out of range for int64"#),
        ]
        for (input, message) in cases {
            #expect(jsonError(PushgateV1.Result.self, input)?.description == message, "\(input)")
        }
    }

    @Test("map values and their keys")
    func mapErrors() {
        let error = jsonError(PushgateV1.PublishRequest.self, #"{"attributes":{"AWS.SNS.MOBILE.APNS.TTL":60}}"#)
        #expect(error?.description == #"attributes["AWS.SNS.MOBILE.APNS.TTL"]: expected a string, got a number"#)
        #expect(
            jsonError(PushgateV1.PublishRequest.self, #"{"attributes":["a"]}"#)?.description
                == "attributes: expected an object, got an array")
    }

    @Test("invalid JSON, duplicate keys and deep nesting are errors, not crashes")
    func invalidJSON() {
        #expect(jsonError(PushgateV1.SendRequest.self, "{")?.description.hasPrefix("invalid JSON: ") == true)
        #expect(jsonError(PushgateV1.SendRequest.self, "")?.description.hasPrefix("invalid JSON: ") == true)
        #expect(
            jsonError(PushgateV1.SendRequest.self, #"{"notifications":[],"notifications":[]}"#)?.description
                .contains("duplicate key") == true)
        let deep = String(repeating: #"{"notifications":["#, count: 200) + String(repeating: "]}", count: 200)
        #expect(jsonError(PushgateV1.SendRequest.self, deep)?.description.hasPrefix("invalid JSON: ") == true)
        let nested = #"{"notifications":[{"alert":{"locArgs":[[[]]]}}]}"#
        #expect(
            jsonError(PushgateV1.SendRequest.self, nested)?.description
                == "notifications[0].alert.locArgs[0]: expected a string, got an array")
    }

    @Test("a long key or value is shortened in the message")
    func longInput() {
        let key = String(repeating: "k", count: 10_000)
        let error = jsonError(PushgateV1.SendRequest.self, #"{"\#(key)":1}"#)
        #expect(error.map { $0.description.utf8.count < 200 } == true)
        let duplicate = jsonError(PushgateV1.SendRequest.self, #"{"\#(key)":1,"\#(key)":2}"#)
        #expect(duplicate.map { $0.description.utf8.count < 300 } == true)
        let value = String(repeating: "9", count: 10_000)
        let range = jsonError(PushgateV1.Result.self, #"{"httpStatus":\#(value)}"#)
        #expect(range.map { $0.description.utf8.count < 200 } == true)
    }
}
