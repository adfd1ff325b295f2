import Testing

@testable import PushCore

@Suite("SNS message structure")
struct SNSMessageTests {
    /// The seed message from the SNS docs: `default` plus an APNs payload encoded as a string.
    static let seed =
        #"{"default": "Hooray!", "APNS": "{\"aps\":{\"alert\":\"Hi\",\"badge\":0,\"sound\":\"bingbong.aiff\"}}"}"#

    func parse(_ message: String, _ structure: String = "json", target: SNSTarget = .topic) throws(ValidationError)
        -> SNSMessage
    {
        try SNSMessage.parse(message: message, structure: structure, target: target, attributes: [:])
    }

    func error(_ message: String, _ structure: String = "json", target: SNSTarget = .topic) -> ValidationError? {
        do throws(ValidationError) {
            _ = try parse(message, structure, target: target)
            return nil
        } catch {
            return error
        }
    }

    @Test("an empty structure makes the whole message the default text")
    func plainText() throws {
        let message = try parse(#"{"not": "parsed"}"#, "")
        #expect(message.defaultText == #"{"not": "parsed"}"#)
        #expect(message.platformTexts.isEmpty)
        #expect(message.text(for: .apns)! == (#"{"not": "parsed"}"#, false))
    }

    @Test("an empty plain message is refused")
    func emptyPlain() {
        #expect(error("", "") == ValidationError(field: "message", message: "must not be empty"))
    }

    @Test("the seed message keeps default and APNS; other platforms fall back to default")
    func seedMessage() throws {
        let message = try parse(Self.seed)
        #expect(message.defaultText == "Hooray!")
        #expect(message.text(for: .apns)! == (#"{"aps":{"alert":"Hi","badge":0,"sound":"bingbong.aiff"}}"#, true))
        #expect(message.text(for: .apnsSandbox)! == ("Hooray!", false))
        #expect(message.text(for: .gcm)! == ("Hooray!", false))
    }

    @Test("GCM, ADM and the VoIP keys are kept; unknown keys and other platforms' keys are ignored")
    func keptKeys() throws {
        let json =
            #"{"default":"d","GCM":"{\"data\":{}}","ADM":"{\"data\":{}}","APNS_VOIP":"v","#
            + #""APNS_VOIP_SANDBOX":"vs","email":"e","BAIDU":{"not":"a string"},"gcm":5,"adm":6,"extra":[1]}"#
        let message = try parse(json)
        #expect(message.text(for: .gcm)! == (#"{"data":{}}"#, true))
        #expect(message.text(for: .adm)! == (#"{"data":{}}"#, true))
        #expect(
            message.platformTexts == [
                "GCM": #"{"data":{}}"#, "ADM": #"{"data":{}}"#, "APNS_VOIP": "v", "APNS_VOIP_SANDBOX": "vs",
            ])
    }

    @Test("keys are case-sensitive: 'apns' is not APNS")
    func caseSensitive() throws {
        let message = try parse(#"{"default":"d","apns":"{}"}"#)
        #expect(message.text(for: .apns)! == ("d", false))
    }

    @Test("an empty string is a valid value")
    func emptyValue() throws {
        let message = try parse(#"{"default":""}"#)
        #expect(message.defaultText == "")
    }

    @Test("a known key with a non-string value rejects the whole publish")
    func nonStringValue() {
        let expected = ValidationError(
            field: "message",
            message: "the value of 'APNS' must be a JSON string (platform payloads are JSON encoded as a string)")
        #expect(error(#"{"default":"d","APNS":{"aps":{}}}"#) == expected)
        #expect(error(#"{"default":5}"#)?.message.hasPrefix("the value of 'default'") == true)
        #expect(error(#"{"default":"d","GCM":null}"#)?.message.hasPrefix("the value of 'GCM'") == true)
    }

    @Test("bad JSON is reported with the parser's offset")
    func badJSON() {
        #expect(
            error(#"{"default":"d",}"#)
                == ValidationError(field: "message", message: "not valid JSON: expected a string key at byte 15"))
        #expect(error(#"{"default":"a","default":"b"}"#)?.message.contains("duplicate key") == true)
    }

    @Test("a JSON message must be an object")
    func notObject() {
        #expect(
            error(#"["default"]"#)
                == ValidationError(
                    field: "message", message: "must be a JSON object when message_structure is \"json\""))
    }

    @Test("a topic publish needs default")
    func topicNeedsDefault() {
        #expect(
            error(#"{"APNS":"{}"}"#)
                == ValidationError(field: "message", message: "JSON must contain an entry for 'default'"))
    }

    @Test("a direct endpoint publish accepts its own platform key instead of default")
    func endpointPlatformKey() throws {
        let message = try parse(#"{"APNS":"{\"aps\":{}}"}"#, target: .endpoint(.apns))
        #expect(message.defaultText == nil)
        #expect(message.text(for: .apns)! == (#"{"aps":{}}"#, true))
        #expect(message.text(for: .gcm) == nil)
    }

    @Test("a direct endpoint publish with neither default nor its key names both")
    func endpointMissingKey() {
        #expect(
            error(#"{"GCM":"{}"}"#, target: .endpoint(.apns))
                == ValidationError(field: "message", message: "JSON must contain an entry for 'default' or 'APNS'"))
        #expect(
            error(#"{"APNS":"{}"}"#, target: .endpoint(.apnsSandbox))?.message
                == "JSON must contain an entry for 'default' or 'APNS_SANDBOX'")
    }

    @Test("message_structure other than empty or json is refused", arguments: ["JSON", "text", " json"])
    func badStructure(structure: String) {
        #expect(error(#"{"default":"d"}"#, structure)?.field == "message_structure")
    }

    @Test("the 256 KB limit counts attribute names and values")
    func sizeLimit() throws {
        let text = String(repeating: "a", count: SNSMessage.maxPublishBytes - 10)
        _ = try SNSMessage.parse(message: text, structure: "", target: .topic, attributes: ["k": "123456789"])
        #expect(throws: ValidationError.self) {
            try SNSMessage.parse(message: text, structure: "", target: .topic, attributes: ["k": "1234567890"])
        }
        let over = String(repeating: "é", count: SNSMessage.maxPublishBytes / 2 + 1)
        #expect(
            error(over, "")
                == ValidationError(
                    field: "message",
                    message: "message and attributes are 262146 bytes, over the SNS limit of 262144 bytes"))
    }
}
