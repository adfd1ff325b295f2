import Testing

@testable import PushCore

@Suite("SNS Web Push payload")
struct SNSWebPushPayloadTests {
    func build(_ message: SNSMessage, attributes: [String: String] = [:], publishedAt: Int64 = 100, now: Int64 = 100)
        throws -> PreparedWebPushMessage?
    {
        try SNSWebPushPayload.build(message: message, attributes: attributes, publishedAt: publishedAt, now: now)
    }

    @Test func webPushKeyWinsElseDefaultAsBody() throws {
        let own = try build(SNSMessage(defaultText: "fallback", platformTexts: ["WEBPUSH": #"{"title":"t"}"#]))
        #expect(own.map { String(decoding: $0.plaintext, as: UTF8.self) } == #"{"title":"t"}"#)
        let fallback = try build(SNSMessage(defaultText: "hello \"you\""))
        #expect(fallback.map { String(decoding: $0.plaintext, as: UTF8.self) } == #"{"body":"hello \"you\""}"#)
        #expect(fallback?.ttl == WebPushMessageRules.defaultTTL)
    }

    @Test func ttlCountsFromThePublish() throws {
        let ttl = ["AWS.SNS.MOBILE.WEBPUSH.TTL": "60"]
        #expect(try build(SNSMessage(defaultText: "x"), attributes: ttl, publishedAt: 100, now: 130)?.ttl == 30)
        #expect(try build(SNSMessage(defaultText: "x"), attributes: ttl, publishedAt: 100, now: 161) == nil)
        #expect(try build(SNSMessage(defaultText: "x"), attributes: ["AWS.SNS.MOBILE.WEBPUSH.TTL": "0"])?.ttl == 0)
    }

    @Test func badWebPushTextIsRefusedAtPublish() throws {
        #expect(throws: ValidationError.self) {
            try SNSMessage.parse(
                message: #"{"default":"x","WEBPUSH":"{nope"}"#, structure: "json", target: .topic, attributes: [:])
        }
        let parsed = try SNSMessage.parse(
            message: #"{"WEBPUSH":"{}"}"#, structure: "json", target: .endpoint(.webpush), attributes: [:])
        #expect(parsed.platformTexts["WEBPUSH"] == "{}")
    }
}
