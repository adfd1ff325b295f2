import PushAWSQuery
import PushTLS
import Testing

@Suite("SigV4: refusals")
struct SigV4FailureTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    static let now: Int64 = 1_440_938_160  // 2015-08-30T12:36:00Z
    static let verifier = SigV4Verifier(region: "us-east-1", service: "sns")
    static let body = Array("Action=Publish&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A1%3At&Message=hi".utf8)

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// A Publish as an SDK signs it, with `edit` applied to the headers before signing.
    static func signed(
        region: String = "us-east-1", service: String = "sns", secret: String = Self.secret,
        date: String = "20150830T123600Z", signedHeaders: [String] = ["content-type", "host", "x-amz-date"],
        edit: (inout [(name: String, value: String)]) -> Void = { _ in }
    ) throws -> SigV4Request {
        var headers: [(name: String, value: String)] = [
            ("host", "sns.us-east-1.amazonaws.com"),
            ("content-type", "application/x-www-form-urlencoded; charset=utf-8"),
            ("x-amz-date", date),
        ]
        edit(&headers)
        var request = SigV4Request(method: "POST", target: "/", headers: headers, body: body)
        let canonical = try SigV4Verifier.canonicalRequest(
            request, signedHeaders: signedHeaders, payloadHash: hex(SHA256.hash(body)))
        let scopeDate = String(date.prefix(8))
        let scope = "\(scopeDate)/\(region)/\(service)/aws4_request"
        let key = SigV4Verifier.signingKey(secret: secret, date: scopeDate, region: region, service: service)
        let signature = HMACSHA256.authenticationCode(
            key: key,
            message: Array(SigV4Verifier.stringToSign(timestamp: date, scope: scope, canonicalRequest: canonical).utf8))
        request.headers.append(
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/\(scope), SignedHeaders=\(signedHeaders.joined(separator: ";")),"
                    + " Signature=\(hex(signature))"
            ))
        return request
    }

    static func failure(_ request: SigV4Request, now: Int64 = Self.now) -> SigV4Failure? {
        do {
            _ = try verifier.verify(request, now: now, secret: { $0 == "AKIDEXAMPLE" ? Self.secret : nil })
            return nil
        } catch {
            return error
        }
    }

    static func replacingAuthorization(_ request: SigV4Request, with value: String) -> SigV4Request {
        var copy = request
        copy.headers = copy.headers.map { $0.name == "authorization" ? ($0.name, value) : $0 }
        return copy
    }

    @Test("a well-signed request passes, at admission and in full; HTTP/2's :authority may stand in for host")
    func accepted() throws {
        let request = try Self.signed()
        #expect(Self.failure(request) == nil)
        let authorization = try Self.verifier.authorization(headers: request.headers, target: request.target)
        #expect(authorization.accessKeyID == "AKIDEXAMPLE")
        #expect(authorization.signedHeaders == ["content-type", "host", "x-amz-date"])
        var http2 = request
        http2.headers = http2.headers.map { $0.name == "host" ? (":authority", $0.value) : $0 }
        #expect(Self.failure(http2) == nil)
    }

    @Test("no Authorization header; presigned URLs, security tokens and other schemes are unsupported")
    func missingAndUnsupported() throws {
        var request = try Self.signed()
        #expect(
            Self.failure(SigV4Request(method: "POST", target: "/", headers: [], body: [])) == .missingAuthentication)
        request.target = "/?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=00"
        #expect(
            Self.failure(request)
                == .unsupported(
                    "query-string (presigned) authentication is not supported; sign the Authorization header"))
        let withToken = try Self.signed { $0.append(("x-amz-security-token", "token")) }
        #expect(
            Self.failure(withToken) == .unsupported("temporary credentials (X-Amz-Security-Token) are not supported"))
        let v2 = Self.replacingAuthorization(try Self.signed(), with: "AWS AKIDEXAMPLE:c2lnbmF0dXJl")
        #expect(Self.failure(v2) == .unsupported("the authorization scheme 'AWS'; only AWS4-HMAC-SHA256 is supported"))
    }

    @Test(
        "malformed Authorization headers are incomplete",
        arguments: [
            (
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sns/aws4_request, SignedHeaders=host",
                "Authorization header requires 'Signature'"
            ),
            (
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sns, SignedHeaders=host, Signature="
                    + String(repeating: "0", count: 64),
                "the Credential must be access-key/yyyyMMdd/region/service/aws4_request, not 4 parts"
            ),
            (
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/2015083/us-east-1/sns/aws4_request, SignedHeaders=host, Signature="
                    + String(repeating: "0", count: 64),
                "the Credential's date '2015083' is not yyyyMMdd"
            ),
            (
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=xyz",
                "the Signature is not 64 hex digits"
            ),
            (
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sns/aws4_request, SignedHeaders=host;, Signature="
                    + String(repeating: "0", count: 64),
                "SignedHeaders has an empty name"
            ),
            (
                "AWS4-HMAC-SHA256 Credential=A/20150830/us-east-1/sns/aws4_request, Credential=B, SignedHeaders=host, Signature=0",
                "Authorization has Credential twice"
            ),
        ])
    func malformed(header: String, message: String) throws {
        #expect(Self.failure(Self.replacingAuthorization(try Self.signed(), with: header)) == .incomplete(message))
    }

    @Test("scope: region, service, terminator and date in AWS's words")
    func scope() throws {
        #expect(
            Self.failure(try Self.signed(region: "eu-west-1"))
                == .signatureMismatch("Credential should be scoped to a valid region, not 'eu-west-1'."))
        #expect(
            Self.failure(try Self.signed(service: "sqs"))
                == .signatureMismatch("Credential should be scoped to correct service: 'sns'."))
        let terminator = Self.replacingAuthorization(
            try Self.signed(),
            with: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sns/aws5_request, SignedHeaders=host,"
                + " Signature=" + String(repeating: "0", count: 64))
        #expect(
            Self.failure(terminator)
                == .signatureMismatch(
                    "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'."))
        let otherDay = try Self.signed { headers in
            headers = headers.map { $0.name == "x-amz-date" ? ($0.name, "20150831T000100Z") : $0 }
        }
        #expect(
            Self.failure(otherDay, now: Self.now + 11 * 3600 + 25 * 60 + 100)
                == .signatureMismatch(
                    "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP:"
                        + " '20150830' != '20150831', from '20150831T000100Z'."))
    }

    @Test("X-Amz-Date: required, Date in the basic format as fallback, host and every signed header present")
    func headers() throws {
        let undated = try Self.signed(signedHeaders: ["content-type", "host"]) {
            $0.removeAll { $0.name == "x-amz-date" }
        }
        #expect(
            Self.failure(undated)
                == .incomplete("the request needs an X-Amz-Date header (or a Date header) as yyyyMMdd'T'HHmmss'Z'"))
        let dated = try Self.signed(signedHeaders: ["date", "host"]) { headers in
            headers = headers.map { $0.name == "x-amz-date" ? ("date", $0.value) : $0 }
        }
        #expect(Self.failure(dated) == nil)
        let httpDate = try Self.signed(signedHeaders: ["date", "host"]) { headers in
            headers = headers.map { $0.name == "x-amz-date" ? ("date", "Sun, 30 Aug 2015 12:36:00 GMT") : $0 }
        }
        #expect(
            Self.failure(httpDate)
                == .incomplete("the request needs an X-Amz-Date header (or a Date header) as yyyyMMdd'T'HHmmss'Z'"))
        let badDate = try Self.signed(date: "20150230T123600Z")
        #expect(
            Self.failure(badDate)
                == .incomplete("the request needs an X-Amz-Date header (or a Date header) as yyyyMMdd'T'HHmmss'Z'"))
        #expect(
            Self.failure(try Self.signed(signedHeaders: ["x-amz-date"]))
                == .incomplete("the host header must be signed"))
        var missing = try Self.signed(signedHeaders: ["content-type", "host", "x-amz-date"])
        missing.headers.removeAll { $0.name == "content-type" }
        #expect(Self.failure(missing) == .incomplete("the signed header 'content-type' is not in the request"))
    }

    @Test("the clock: 15 minutes either way, with AWS's texts")
    func skew() throws {
        let request = try Self.signed()
        #expect(Self.failure(request, now: Self.now + 900) == nil)
        #expect(Self.failure(request, now: Self.now - 900) == nil)
        #expect(
            Self.failure(request, now: Self.now + 1200)
                == .expired(
                    "Signature expired: 20150830T123600Z is now earlier than 20150830T124100Z (20150830T125600Z - 15 min.)"
                ))
        #expect(
            Self.failure(request, now: Self.now - 1200)
                == .expired(
                    "Signature not yet current: 20150830T123600Z is still later than 20150830T123100Z"
                        + " (20150830T121600Z + 15 min.)"))
    }

    @Test("an unknown key, a wrong secret, a changed body or header, a wrong payload hash")
    func mismatches() throws {
        let request = try Self.signed()
        #expect(
            (try? Self.verifier.verify(request, now: Self.now, secret: { _ in nil })) == nil)
        #expect(throws: SigV4Failure.unknownAccessKey) {
            try Self.verifier.verify(request, now: Self.now, secret: { _ in nil })
        }
        let differs = SigV4Failure.signatureMismatch(
            "The request signature we calculated does not match the signature you provided. Check your AWS Secret"
                + " Access Key and signing method. Consult the service documentation for details.")
        #expect(Self.failure(try Self.signed(secret: "another secret")) == differs)
        var tampered = request
        tampered.body[tampered.body.count - 1] ^= 1
        #expect(Self.failure(tampered) == differs)
        var retargeted = request
        retargeted.headers = retargeted.headers.map { $0.name == "host" ? ($0.name, "evil.example") : $0 }
        #expect(Self.failure(retargeted) == differs)
        let hashed = try Self.signed(signedHeaders: ["host", "x-amz-content-sha256", "x-amz-date"]) {
            $0.append(("x-amz-content-sha256", Self.hex(SHA256.hash(Self.body))))
        }
        #expect(Self.failure(hashed) == nil)
        let wrongHash = try Self.signed(signedHeaders: ["host", "x-amz-content-sha256", "x-amz-date"]) {
            $0.append(("x-amz-content-sha256", Self.hex(SHA256.hash([UInt8]()))))
        }
        #expect(
            Self.failure(wrongHash)
                == .signatureMismatch("The provided 'x-amz-content-sha256' header does not match what was computed."))
    }

    @Test("no failure's text holds the secret or the signing key")
    func secretNeverShown() throws {
        let key = Self.hex(
            SigV4Verifier.signingKey(secret: Self.secret, date: "20150830", region: "us-east-1", service: "sns"))
        let requests = [
            try Self.signed(secret: "another secret"), try Self.signed(region: "eu-west-1"), try Self.signed(),
            Self.replacingAuthorization(try Self.signed(), with: "AWS4-HMAC-SHA256 Credential=\(Self.secret)"),
        ]
        for request in requests {
            for now in [Self.now, Self.now + 5000] {
                guard let failure = Self.failure(request, now: now) else { continue }
                let text = failure.description + "\(failure)" + String(reflecting: failure)
                #expect(!text.contains(Self.secret))
                #expect(!text.contains(key))
            }
        }
    }
}
