import Testing

@testable import PushCore

@Suite("SNS → ADM message")
struct SNSADMPayloadTests {
    static let ttlName = "AWS.SNS.MOBILE.ADM.TTL"

    /// A `json` message with an `ADM` entry holding `adm` (raw JSON, escaped here) and a default.
    func message(adm: String?, defaultText: String? = "d") throws -> SNSMessage {
        var members: [(String, JSONValue)] = []
        if let defaultText { members.append(("default", .string(defaultText))) }
        if let adm { members.append(("ADM", .string(adm))) }
        let json = String(decoding: JSONWriter.encode(.object(members)), as: UTF8.self)
        let target: SNSTarget = defaultText == nil ? .endpoint(.adm) : .topic
        return try SNSMessage.parse(message: json, structure: "json", target: target, attributes: [:])
    }

    func build(
        _ message: SNSMessage, attributes: [String: String] = [:], publishedAt: Int64 = 1_000, now: Int64 = 1_000
    ) throws(ValidationError) -> PreparedADMMessage? {
        try SNSADMPayload.build(message: message, attributes: attributes, publishedAt: publishedAt, now: now)
    }

    func error(_ message: SNSMessage, attributes: [String: String] = [:]) -> ValidationError? {
        do throws(ValidationError) {
            _ = try build(message, attributes: attributes)
            return nil
        } catch {
            return error
        }
    }

    func body(_ prepared: PreparedADMMessage?) -> String? {
        prepared.map { String(decoding: $0.body, as: UTF8.self) }
    }

    @Test("only default: a data message with the text under \"default\", no tokens, no expiry")
    func defaultOnly() throws {
        let plain = try SNSMessage.parse(message: "Hello \"you\" ✓", structure: "", target: .topic, attributes: [:])
        let prepared = try #require(try build(plain))
        #expect(body(prepared) == #"{"data":{"default":"Hello \"you\" ✓"}}"#)
        #expect(prepared.tokens.isEmpty)
        #expect(prepared.expiration == nil)
        #expect(SNSADMPayload.defaultData(text: "x") == Array(#"{"data":{"default":"x"}}"#.utf8))
        // A json message without ADM gives Fire devices the default text too.
        let json = try SNSMessage.parse(
            message: #"{"default":"fallback","GCM":"{}"}"#, structure: "json", target: .topic, attributes: [:])
        #expect(body(try build(json)) == #"{"data":{"default":"fallback"}}"#)
    }

    @Test("the ADM object is sent as is, compactly, in its own order")
    func admObject() throws {
        let adm = #"{ "consolidationKey" : "Sync", "data" : {"message":"Hey, Max","time":"10/26/2012"}, "md5":"q==" }"#
        let prepared = try #require(try build(try message(adm: adm)))
        #expect(
            body(prepared)
                == #"{"consolidationKey":"Sync","data":{"message":"Hey, Max","time":"10/26/2012"},"md5":"q=="}"#)
        #expect(prepared.expiration == nil)
        // ADM wins over default for ADM endpoints, and works without default on a direct publish.
        #expect(body(try build(try message(adm: #"{"data":{}}"#, defaultText: nil))) == #"{"data":{}}"#)
    }

    @Test("ADM object errors name the member at fault; data values are not stringified")
    func admErrors() throws {
        let cases: [(String, String)] = [
            (#"{"data":{"count":3}}"#, "message.ADM.data.count"),
            (#"{"data":{"o":{"a":"b"}}}"#, "message.ADM.data.o"),
            (#"{"data":"text"}"#, "message.ADM.data"),
            (#"{"data":{},"priority":"high"}"#, "message.ADM.priority"),
            (#"{"consolidationKey":["a"]}"#, "message.ADM.consolidationKey"),
            (#"{"expiresAfter":0}"#, "message.ADM.expiresAfter"),
            (#"{"expiresAfter":2592001}"#, "message.ADM.expiresAfter"),
            (#"{"expiresAfter":"3600"}"#, "message.ADM.expiresAfter"),
        ]
        for (adm, field) in cases {
            #expect(error(try message(adm: adm))?.field == field, "\(adm)")
        }
        #expect(
            error(try message(adm: #"{"data":{"count":3}}"#))?.message
                == "must be a JSON string (ADM data values are strings)")
    }

    @Test("the body's expiresAfter counts from the publish: what remains is sent")
    func bodyTTL() throws {
        let m = try message(adm: #"{"data":{"k":"v"},"expiresAfter":3600}"#)
        let fresh = try #require(try build(m))
        #expect(body(fresh) == #"{"data":{"k":"v"},"expiresAfter":3600}"#)
        #expect(fresh.expiration == Int64(1_000 + 3_600))
        let later = try #require(try build(m, publishedAt: 1_000, now: 1_600))
        #expect(body(later) == #"{"data":{"k":"v"},"expiresAfter":3000}"#)
        #expect(later.expiration == Int64(1_600 + 3_000))
        // Exactly at the TTL is not past it: the shortest ADM TTL is sent.
        #expect(body(try build(m, publishedAt: 1_000, now: 4_600)) == #"{"data":{"k":"v"},"expiresAfter":1}"#)
        #expect(try build(m, publishedAt: 1_000, now: 4_601) == nil)
    }

    @Test("AWS.SNS.MOBILE.ADM.TTL wins over expiresAfter and replaces it in place")
    func attributeWins() throws {
        let m = try message(adm: #"{"expiresAfter":60,"data":{"k":"v"}}"#)
        let prepared = try #require(try build(m, attributes: [Self.ttlName: "7200"], publishedAt: 1_000, now: 1_200))
        #expect(body(prepared) == #"{"expiresAfter":7000,"data":{"k":"v"}}"#)
        #expect(prepared.expiration == Int64(1_200 + 7_000))
        // Past the body's 60 s but within the attribute's TTL: still sent.
        #expect(try build(m, attributes: [Self.ttlName: "100"], publishedAt: 1_000, now: 1_090) != nil)
        // Within the body's TTL but past the attribute's: dropped.
        #expect(try build(m, attributes: [Self.ttlName: "10"], publishedAt: 1_000, now: 1_030) == nil)
        // Only the ADM attribute counts for ADM; the FCM one is checked but not used.
        let other = try #require(try build(m, attributes: ["AWS.SNS.MOBILE.FCM.TTL": "5"], now: 1_030))
        #expect(body(other) == #"{"expiresAfter":30,"data":{"k":"v"}}"#)
    }

    @Test("the attribute TTL applies to the default message too, added after data")
    func attributeOnDefault() throws {
        let plain = try SNSMessage.parse(message: "hi", structure: "", target: .topic, attributes: [:])
        let prepared = try #require(try build(plain, attributes: [Self.ttlName: "600"], publishedAt: 1_000, now: 1_100))
        #expect(body(prepared) == #"{"data":{"default":"hi"},"expiresAfter":500}"#)
        #expect(prepared.expiration == Int64(1_600))
    }

    @Test("TTL 0 means drop for ADM; a TTL beyond 30 days is clamped after the dwell time")
    func ttlEdges() throws {
        let m = try message(adm: #"{"data":{}}"#)
        #expect(try build(m, attributes: [Self.ttlName: "0"]) == nil)
        let long = try #require(try build(m, attributes: [Self.ttlName: "99999999"], publishedAt: 1_000, now: 1_000))
        #expect(body(long) == #"{"data":{},"expiresAfter":2592000}"#)
        // 40 days published 15 days ago: 25 days are left, under the clamp.
        let day: Int64 = 86_400
        let aged = try #require(
            try build(m, attributes: [Self.ttlName: String(40 * day)], publishedAt: 0, now: 15 * day))
        #expect(body(aged) == #"{"data":{},"expiresAfter":"# + String(25 * day) + "}")
        // A clock behind the publish time counts as no dwell.
        #expect(
            body(try build(m, attributes: [Self.ttlName: "50"], publishedAt: 1_000, now: 900))
                == #"{"data":{},"expiresAfter":50}"#)
        #expect(SNSADMPayload.remaining(ttl: 10, elapsed: 11) == nil)
        #expect(SNSADMPayload.remaining(ttl: 10, elapsed: 10) == 1)
    }

    @Test("bad attributes fail with the attribute named, before the expiry test")
    func badAttributes() throws {
        let m = try message(adm: #"{"data":{}}"#)
        #expect(error(m, attributes: [Self.ttlName: "-1"])?.field == #"attributes["AWS.SNS.MOBILE.ADM.TTL"]"#)
        #expect(error(m, attributes: [Self.ttlName: "1h"])?.field == #"attributes["AWS.SNS.MOBILE.ADM.TTL"]"#)
        #expect(
            error(m, attributes: ["AWS.SNS.MOBILE.APNS.PRIORITY": "7"])?.field
                == #"attributes["AWS.SNS.MOBILE.APNS.PRIORITY"]"#)
        #expect(SNSAttributeName.ttl(for: .adm) == Self.ttlName)
    }

    @Test("over 6144 bytes fails naming message.ADM even when expired; a long default names message")
    func size() throws {
        let big = try message(adm: #"{"data":{"k":""# + String(repeating: "x", count: 6144) + #""}}"#)
        let e = error(big)
        #expect(e?.field == "message.ADM")
        #expect(e?.message.hasPrefix("the ADM message is 6161 bytes, over the ADM limit of 6144 bytes") == true)
        #expect(throws: ValidationError.self) {
            try SNSADMPayload.build(message: big, attributes: [Self.ttlName: "1"], publishedAt: 0, now: 1_000)
        }
        let frame = #"{"data":{"default":""}}"#.utf8.count
        let fits = try SNSMessage.parse(
            message: String(repeating: "y", count: 6144 - frame), structure: "", target: .topic, attributes: [:])
        #expect(try build(fits)?.body.count == 6144)
        let bigDefault = try SNSMessage.parse(
            message: String(repeating: "y", count: 6144), structure: "", target: .topic, attributes: [:])
        #expect(error(bigDefault)?.field == "message")
    }

    @Test("a message with neither ADM nor default cannot be built for ADM")
    func missingEntry() throws {
        let gcmOnly = try SNSMessage.parse(
            message: #"{"GCM":"{}"}"#, structure: "json", target: .endpoint(.gcm), attributes: [:])
        #expect(
            error(gcmOnly)
                == ValidationError(field: "message", message: "JSON must contain an entry for 'default' or 'ADM'"))
    }

    @Test("publish refuses an ADM value that is not a JSON object, or not a string")
    func publishCheck() {
        func parseError(_ json: String, target: SNSTarget = .topic) -> ValidationError? {
            do throws(ValidationError) {
                _ = try SNSMessage.parse(message: json, structure: "json", target: target, attributes: [:])
                return nil
            } catch {
                return error
            }
        }
        func withADM(_ adm: String) -> String {
            String(
                decoding: JSONWriter.encode(.object([("default", .string("d")), ("ADM", .string(adm))])), as: UTF8.self)
        }
        #expect(parseError(withADM("[]"))?.field == "message.ADM")
        #expect(parseError(withADM("[]"))?.message.hasPrefix("must be a JSON object") == true)
        #expect(parseError(withADM(""))?.field == "message.ADM")
        #expect(parseError(withADM("{\"data\":"))?.message.hasPrefix("is not valid JSON") == true)
        #expect(parseError(withADM("\"text\""))?.field == "message.ADM")
        #expect(parseError(withADM(#"{"data":{}}"#)) == nil)
        // ADM is a known key now: a non-string value fails the publish instead of being ignored.
        #expect(
            parseError(#"{"default":"d","ADM":{"data":{}}}"#)?.message.contains("'ADM' must be a JSON string") == true)
        // A direct publish to an ADM endpoint needs default or ADM.
        #expect(parseError(#"{"ADM":"{\"data\":{}}"}"#, target: .endpoint(.adm)) == nil)
        #expect(
            parseError(#"{"GCM":"{}"}"#, target: .endpoint(.adm))
                == ValidationError(field: "message", message: "JSON must contain an entry for 'default' or 'ADM'"))
        #expect(SNSMessage.knownKeys.contains("ADM"))
        #expect(PlatformKey(rawValue: "ADM") == .adm)
    }
}
