import PushAWSQuery
import PushTLS
import Testing

/// AWS's Signature Version 4 test suite (the cases in SigV4TestSuiteData.swift) and the IAM
/// ListUsers example of AWS's documentation, through each step and through the whole verifier.
@Suite("SigV4: AWS's test suite")
struct SigV4TestSuiteTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    static let timestamp = "20150830T123600Z"
    static let now: Int64 = 1_440_938_160  // 2015-08-30T12:36:00Z
    static let verifier = SigV4Verifier(region: "us-east-1", service: "service")

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The suite's request text as a ``SigV4Request``: header names lowercased, a continuation line
    /// appended to the previous value after a line break, the body after the blank line.
    static func request(_ text: String) -> SigV4Request {
        let parts = text.split(separator: "\n\n", maxSplits: 1, omittingEmptySubsequences: false)
        var lines = parts[0].split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        let requestLine = lines.removeFirst()
        let method = String(requestLine.prefix(while: { $0 != " " }))
        let target = String(requestLine.dropFirst(method.count + 1).dropLast(" HTTP/1.1".count))
        var headers: [(name: String, value: String)] = []
        for line in lines {
            if line.first == " ", !headers.isEmpty {
                headers[headers.count - 1].value += "\n" + line
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((line[..<colon].lowercased(), String(line[line.index(after: colon)...])))
            }
        }
        let body = parts.count > 1 ? Array(parts[1].utf8) : []
        return SigV4Request(method: method, target: target, headers: headers, body: body)
    }

    static func authorization(_ testCase: SigV4SuiteCase) -> String {
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders="
            + testCase.signedHeaders + ", Signature=" + testCase.signature
    }

    @Test("canonical request, string to sign and signature", arguments: SigV4TestSuite.cases)
    func steps(_ testCase: SigV4SuiteCase) throws {
        let request = Self.request(testCase.request)
        let canonical = try SigV4Verifier.canonicalRequest(
            request, signedHeaders: testCase.signedHeaders.split(separator: ";").map(String.init),
            payloadHash: Self.hex(SHA256.hash(request.body)))
        #expect(canonical == testCase.canonicalRequest)
        let stringToSign = SigV4Verifier.stringToSign(
            timestamp: Self.timestamp, scope: "20150830/us-east-1/service/aws4_request", canonicalRequest: canonical)
        #expect(stringToSign == testCase.stringToSign)
        let key = SigV4Verifier.signingKey(
            secret: Self.secret, date: "20150830", region: "us-east-1", service: "service")
        #expect(
            Self.hex(HMACSHA256.authenticationCode(key: key, message: Array(stringToSign.utf8))) == testCase.signature)
    }

    @Test(
        "the verifier accepts each signed request (temporary credentials are refused)", arguments: SigV4TestSuite.cases)
    func verify(_ testCase: SigV4SuiteCase) throws {
        var request = Self.request(testCase.request)
        request.headers.append(("authorization", Self.authorization(testCase)))
        let secret: (String) -> String? = { $0 == "AKIDEXAMPLE" ? Self.secret : nil }
        if testCase.signedHeaders.contains("x-amz-security-token") {
            #expect(throws: SigV4Failure.unsupported("temporary credentials (X-Amz-Security-Token) are not supported"))
            {
                try Self.verifier.verify(request, now: Self.now, secret: secret)
            }
        } else {
            #expect(try Self.verifier.verify(request, now: Self.now, secret: secret) == "AKIDEXAMPLE")
        }
    }

    // AWS's documentation ("Create a signed AWS API request", the IAM example): GET
    // https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08 with these headers; canonical
    // request hash f536975d…, signing key c4afb1cc…, signature 5d672d79….
    @Test("AWS's IAM ListUsers example")
    func iamListUsers() throws {
        var request = SigV4Request(
            method: "GET", target: "/?Action=ListUsers&Version=2010-05-08",
            headers: [
                ("host", "iam.amazonaws.com"), ("content-type", "application/x-www-form-urlencoded; charset=utf-8"),
                ("x-amz-date", "20150830T123600Z"),
            ], body: [])
        let canonical = try SigV4Verifier.canonicalRequest(
            request, signedHeaders: ["content-type", "host", "x-amz-date"],
            payloadHash: Self.hex(SHA256.hash([UInt8]())))
        #expect(Self.hex(SHA256.hash(canonical)) == "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59")
        let key = SigV4Verifier.signingKey(secret: Self.secret, date: "20150830", region: "us-east-1", service: "iam")
        #expect(Self.hex(key) == "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9")
        request.headers.append(
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request,"
                    + " SignedHeaders=content-type;host;x-amz-date,"
                    + " Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
            ))
        let verifier = SigV4Verifier(region: "us-east-1", service: "iam")
        #expect(try verifier.verify(request, now: Self.now + 60, secret: { _ in Self.secret }) == "AKIDEXAMPLE")
    }
}
