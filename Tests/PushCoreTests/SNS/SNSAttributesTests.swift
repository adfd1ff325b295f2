import Testing

@testable import PushCore

@Suite("SNS message attributes")
struct SNSAttributesTests {
    func error(_ attributes: [String: String], _ key: PlatformKey = .apns) -> ValidationError? {
        do throws(ValidationError) {
            _ = try SNSAttributes.parse(attributes, platformKey: key)
            return nil
        } catch {
            return error
        }
    }

    @Test("no attributes give no options")
    func empty() throws {
        #expect(try SNSAttributes.parse([:], platformKey: .apns) == SNSDeliveryOptions())
    }

    @Test("the reserved APNs attributes are read")
    func reserved() throws {
        let options = try SNSAttributes.parse(
            [
                "AWS.SNS.MOBILE.APNS.PUSH_TYPE": "voip", "AWS.SNS.MOBILE.APNS.PRIORITY": "5",
                "AWS.SNS.MOBILE.APNS.TOPIC": "com.example.app.voip", "AWS.SNS.MOBILE.APNS.COLLAPSE_ID": "score",
                "AWS.SNS.MOBILE.APNS.TTL": "60", "store": "example",
            ], platformKey: .apns)
        #expect(
            options
                == SNSDeliveryOptions(
                    pushType: .voip, priority: 5, topic: "com.example.app.voip", collapseID: "score", ttlSeconds: 60))
    }

    @Test("each platform takes only its own TTL attribute")
    func ttlPerPlatform() throws {
        let attributes = [
            "AWS.SNS.MOBILE.APNS.TTL": "10", "AWS.SNS.MOBILE.APNS_SANDBOX.TTL": "20", "AWS.SNS.MOBILE.FCM.TTL": "30",
            "AWS.SNS.MOBILE.ADM.TTL": "40", "AWS.SNS.MOBILE.APNS_VOIP.TTL": "50",
        ]
        #expect(try SNSAttributes.parse(attributes, platformKey: .apns).ttlSeconds == 10)
        #expect(try SNSAttributes.parse(attributes, platformKey: .apnsSandbox).ttlSeconds == 20)
        #expect(try SNSAttributes.parse(attributes, platformKey: .gcm).ttlSeconds == 30)
        #expect(try SNSAttributes.parse(["AWS.SNS.MOBILE.APNS.TTL": "10"], platformKey: .gcm).ttlSeconds == nil)
    }

    @Test("a TTL of 0 is kept (meaningful for APNs and FCM)")
    func ttlZero() throws {
        #expect(try SNSAttributes.parse(["AWS.SNS.MOBILE.APNS.TTL": "0"], platformKey: .apns).ttlSeconds == 0)
    }

    @Test(
        "a TTL must be plain digits within Int64",
        arguments: ["", "-1", "+5", "1.5", "1e3", " 5", "9223372036854775808"])
    func badTTL(value: String) {
        #expect(
            error(["AWS.SNS.MOBILE.APNS_SANDBOX.TTL": value], .gcm)
                == ValidationError(
                    field: #"attributes["AWS.SNS.MOBILE.APNS_SANDBOX.TTL"]"#,
                    message: "must be a whole number of seconds, 0 or more"))
    }

    @Test("every push type is accepted; others are refused")
    func pushTypes() throws {
        for type in PushType.allCases {
            let options = try SNSAttributes.parse(["AWS.SNS.MOBILE.APNS.PUSH_TYPE": type.rawValue], platformKey: .apns)
            #expect(options.pushType == type)
        }
        let failure = error(["AWS.SNS.MOBILE.APNS.PUSH_TYPE": "Alert"])
        #expect(failure?.field == #"attributes["AWS.SNS.MOBILE.APNS.PUSH_TYPE"]"#)
        #expect(failure?.message.hasPrefix("unknown push type \"Alert\"") == true)
    }

    @Test("priority is 1, 5 or 10")
    func priority() throws {
        for value in [1, 5, 10] {
            #expect(
                try SNSAttributes.parse(["AWS.SNS.MOBILE.APNS.PRIORITY": "\(value)"], platformKey: .apns).priority
                    == value)
        }
        for value in ["0", "high", "05", ""] {
            #expect(
                error(["AWS.SNS.MOBILE.APNS.PRIORITY": value])
                    == ValidationError(
                        field: #"attributes["AWS.SNS.MOBILE.APNS.PRIORITY"]"#, message: #"must be "1", "5" or "10""#))
        }
    }

    @Test("the topic must be a non-empty printable ASCII header value")
    func topic() {
        let field = #"attributes["AWS.SNS.MOBILE.APNS.TOPIC"]"#
        #expect(error(["AWS.SNS.MOBILE.APNS.TOPIC": ""]) == ValidationError(field: field, message: "must not be empty"))
        #expect(
            error(["AWS.SNS.MOBILE.APNS.TOPIC": "com.example app"])?.message == "must be printable ASCII without spaces"
        )
    }

    @Test("the collapse id is at most 64 bytes without control characters")
    func collapseID() throws {
        let field = #"attributes["AWS.SNS.MOBILE.APNS.COLLAPSE_ID"]"#
        let ok = String(repeating: "x", count: 64)
        #expect(try SNSAttributes.parse(["AWS.SNS.MOBILE.APNS.COLLAPSE_ID": ok], platformKey: .apns).collapseID == ok)
        #expect(
            error(["AWS.SNS.MOBILE.APNS.COLLAPSE_ID": ok + "x"])
                == ValidationError(field: field, message: "must be at most 64 bytes"))
        #expect(error(["AWS.SNS.MOBILE.APNS.COLLAPSE_ID": "a\nb"])?.message == "must not contain control characters")
    }

    @Test(
        "other AWS. and Amazon. names are reserved, in any case",
        arguments: ["AWS.SNS.MOBILE.APNS.SOUND", "aws.custom", "Amazon.thing", "AMAZON.x", "AWS.SNS.MOBILE.APNS.ttl"])
    func reservedNames(name: String) {
        #expect(
            error([name: "1"])
                == ValidationError(
                    field: "attributes[\"\(name)\"]", message: #"names starting with "AWS." or "Amazon." are reserved"#)
        )
    }

    @Test(
        "ordinary names follow SNS's rule",
        arguments: ["", ".a", "a.", "a..b", "a b", "é", String(repeating: "a", count: 257)])
    func badNames(name: String) {
        let failure = error([name: "v"])
        #expect(failure?.field == "attributes[\"\(name)\"]")
        #expect(failure?.message.hasPrefix("name must be 1-256 characters") == true)
    }

    @Test("well-formed ordinary names pass and are not delivery options")
    func goodNames() throws {
        let attributes = ["store": "x", "a.b-c_D9": "y", String(repeating: "a", count: 256): "z", "AWSish": "w"]
        #expect(try SNSAttributes.parse(attributes, platformKey: .apns) == SNSDeliveryOptions())
    }

    @Test("errors come in name order, so they are stable")
    func stableOrder() {
        #expect(
            error(["z..": "", "AWS.SNS.MOBILE.APNS.PRIORITY": "2"])?.field
                == #"attributes["AWS.SNS.MOBILE.APNS.PRIORITY"]"#)
    }
}
