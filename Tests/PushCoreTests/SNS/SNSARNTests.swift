import PushCore
import Testing

@Suite("SNS ARNs")
struct SNSARNTests {
    let arns = SNSARNs(region: "us-east-1", accountID: "123456789012")

    @Test func madeAndReadBack() {
        let app = arns.application(platform: .gcm, app: "android")
        #expect(app == "arn:aws:sns:us-east-1:123456789012:app/GCM/android")
        #expect(arns.readApplication(app)! == (PlatformKey.gcm, "android"))
        let endpoint = arns.endpoint(platform: .webpush, app: "web", id: "abc")
        #expect(endpoint == "arn:aws:sns:us-east-1:123456789012:endpoint/WEBPUSH/web/abc")
        #expect(arns.readEndpoint(endpoint)! == ("WEBPUSH", "web", "abc"))
        #expect(arns.readTopic(arns.topic("news")) == "news")
        let subscription = arns.subscription(topic: "news", id: "s1")
        #expect(subscription == "arn:aws:sns:us-east-1:123456789012:news:s1")
        #expect(arns.readSubscription(subscription)! == ("news", "s1"))
    }

    @Test func foreignOrMalformedARNsAreNotRead() {
        #expect(arns.readTopic("arn:aws:sns:eu-west-1:123456789012:news") == nil)
        #expect(arns.readTopic("arn:aws:sns:us-east-1:999999999999:news") == nil)
        #expect(arns.readTopic("arn:aws:sns:us-east-1:123456789012:") == nil)
        #expect(arns.readTopic("arn:aws:sns:us-east-1:123456789012:news:s1") == nil)
        #expect(arns.readApplication("arn:aws:sns:us-east-1:123456789012:app/FOO/x") == nil)
        #expect(arns.readApplication("arn:aws:sns:us-east-1:123456789012:app/APNS/") == nil)
        #expect(arns.readEndpoint("arn:aws:sns:us-east-1:123456789012:endpoint/APNS/ios") == nil)
        #expect(arns.readEndpoint("arn:aws:sns:us-east-1:123456789012:endpoint/APNS/ios/a/b") == nil)
        #expect(arns.readSubscription("arn:aws:sns:us-east-1:123456789012:news") == nil)
        #expect(arns.readSubscription("arn:aws:sns:us-east-1:123456789012:app/APNS/x:y") == nil)
    }
}
