import PushAWSQuery
import Testing

/// Requests signed by an independent signer, botocore 1.44.18 (`SigV4Auth.add_auth`, the clock fixed
/// at 20150830T123600Z, AKIDEXAMPLE's example secret), written down as they go on the wire: the
/// request target as sent (botocore leaves the path as given and writes a space in a query value
/// as `+`), the headers it sends plus `host`, the body. botocore signed the second one's path as
/// `/a%20b/%E1%88%B4/d%252Fe/` and its query as `%E1%88%B4=%C3%BC&a=x%2Fy~&empty=&z=1%202`.
@Suite("SigV4: requests botocore signed")
struct SigV4BotocoreTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    static let now: Int64 = 1_440_938_160  // 2015-08-30T12:36:00Z

    @Test("an SNS Publish with a message attribute")
    func publish() throws {
        let body =
            "Action=Publish&Version=2010-03-31&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A123456789012%3Anews"
            + "&Message=Hello+w%C3%B6rld%21&MessageAttributes.entry.1.Name=store"
            + "&MessageAttributes.entry.1.Value.DataType=String&MessageAttributes.entry.1.Value.StringValue=example+corp"
        let request = SigV4Request(
            method: "POST", target: "/",
            headers: [
                ("host", "sns.us-east-1.amazonaws.com"),
                ("content-type", "application/x-www-form-urlencoded; charset=utf-8"),
                ("x-amz-date", "20150830T123600Z"),
                (
                    "authorization",
                    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sns/aws4_request,"
                        + " SignedHeaders=content-type;host;x-amz-date,"
                        + " Signature=6307815302cb4e2d53972fb2b9a57367a1b80122411552f5c4a16afe6700c709"
                ),
                ("content-length", "262"),
            ], body: Array(body.utf8))
        let verifier = SigV4Verifier(region: "us-east-1", service: "sns")
        #expect(try verifier.verify(request, now: Self.now, secret: { _ in Self.secret }) == "AKIDEXAMPLE")
        let parameters = try QueryParameters.decode(form: request.body)
        #expect(parameters["Message"] == "Hello wörld!")
    }

    @Test("a GET whose path needs normalizing and encoding twice, and whose query has + for a space")
    func pathAndQuery() throws {
        let request = SigV4Request(
            method: "GET", target: "/a b/ሴ/./c/../d%2Fe/?z=1+2&a=x%2Fy~&%E1%88%B4=%C3%BC&empty=",
            headers: [
                ("host", "example.amazonaws.com"), ("x-amz-date", "20150830T123600Z"),
                (
                    "authorization",
                    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request,"
                        + " SignedHeaders=host;x-amz-date,"
                        + " Signature=1542eaf1bea5a96ffd657fcc32da2a9effa9ca1eb214962a0bc7ae2267196c7f"
                ),
            ], body: [])
        let canonical = try SigV4Verifier.canonicalRequest(
            request, signedHeaders: ["host", "x-amz-date"],
            payloadHash: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            canonical.split(separator: "\n").prefix(3)
                == ["GET", "/a%20b/%E1%88%B4/d%252Fe/", "%E1%88%B4=%C3%BC&a=x%2Fy~&empty=&z=1%202"])
        let verifier = SigV4Verifier(region: "us-east-1", service: "service")
        #expect(try verifier.verify(request, now: Self.now, secret: { _ in Self.secret }) == "AKIDEXAMPLE")
    }
}
