import PushCore
import PushTLS

/// Verifies AWS Signature Version 4 header authentication for one region and service, as AWS's
/// "Elements of an AWS API request signature" and "Create a canonical request" describe it.
/// Pure: the clock and the secret lookup are given.
public struct SigV4Verifier: Sendable {
    public let region: String
    public let service: String
    /// How far X-Amz-Date may be from now, either way (AWS: 15 minutes).
    public let allowedSkewSeconds: Int64

    public init(region: String, service: String, allowedSkewSeconds: Int64 = 900) {
        self.region = region
        self.service = service
        self.allowedSkewSeconds = allowedSkewSeconds
    }

    /// Checks the header's shape and scope before the body is read (admission): the Authorization
    /// header parsed, region and service ours, a timestamp whose date is the scope's, `host`
    /// signed, every signed header present. `target` (optional here) lets a presigned URL be named
    /// as such rather than as missing authentication.
    ///
    /// - Returns: the parsed authorization.
    public func authorization(headers: [(name: String, value: String)], target: String = "")
        throws(SigV4Failure) -> SigV4Authorization
    {
        try checked(headers: headers, target: target).authorization
    }

    /// The whole check: ``authorization(headers:target:)``, the clock skew, the access key, the
    /// payload hash and the signature (compared in constant time).
    ///
    /// - Parameters:
    ///   - now: Unix seconds.
    ///   - secret: the secret access key of an access key id, or nil for an unknown one.
    /// - Returns: the access key id that signed.
    public func verify(_ request: SigV4Request, now: Int64, secret: (String) -> String?) throws(SigV4Failure)
        -> String
    {
        let (authorization, timestamp, seconds) = try checked(headers: request.headers, target: request.target)
        if seconds < now - allowedSkewSeconds {
            throw .expired(SigV4Text.expired(timestamp: timestamp, now: now, skewSeconds: allowedSkewSeconds))
        }
        if seconds > now + allowedSkewSeconds {
            throw .expired(SigV4Text.notYetCurrent(timestamp: timestamp, now: now, skewSeconds: allowedSkewSeconds))
        }
        guard let secretKey = secret(authorization.accessKeyID) else { throw .unknownAccessKey }
        let payloadHash = Hex.lowercase(SHA256.hash(request.body))
        if let claimed = request.headers.first(where: { $0.name == "x-amz-content-sha256" }),
            claimed.value.trimmingSpaces != payloadHash
        {
            throw .signatureMismatch(SigV4Text.payloadHashDiffers)
        }
        let canonical = try Self.canonicalRequest(
            request, signedHeaders: authorization.signedHeaders, payloadHash: payloadHash)
        let scope = [authorization.date, region, service, SigV4Authorization.terminator].joined(separator: "/")
        let key = Self.signingKey(secret: secretKey, date: authorization.date, region: region, service: service)
        let expected = HMACSHA256.authenticationCode(
            key: key,
            message: Array(Self.stringToSign(timestamp: timestamp, scope: scope, canonicalRequest: canonical).utf8))
        guard ConstantTime.equal(Array(Hex.lowercase(expected).utf8), Array(authorization.signature.utf8)) else {
            throw .signatureMismatch(SigV4Text.signatureDiffers)
        }
        return authorization.accessKeyID
    }

    /// `AWS4-HMAC-SHA256`, the timestamp, the scope and the canonical request's SHA-256 in hex, one
    /// per line.
    public static func stringToSign(timestamp: String, scope: String, canonicalRequest: String) -> String {
        [SigV4Authorization.algorithm, timestamp, scope, Hex.lowercase(SHA256.hash(canonicalRequest))].joined(
            separator: "\n")
    }

    /// HMAC chain `"AWS4" + secret` → date → region → service → `aws4_request`.
    public static func signingKey(secret: String, date: String, region: String, service: String) -> [UInt8] {
        var key = Array(("AWS4" + secret).utf8)
        for part in [date, region, service, SigV4Authorization.terminator] {
            key = HMACSHA256.authenticationCode(key: key, message: Array(part.utf8))
        }
        return key
    }

    /// The header checks shared by admission and verification, with the timestamp used (its text
    /// and Unix seconds).
    private func checked(headers: [(name: String, value: String)], target: String)
        throws(SigV4Failure) -> (authorization: SigV4Authorization, timestamp: String, seconds: Int64)
    {
        if Self.isPresigned(target) {
            throw .unsupported(
                "query-string (presigned) authentication is not supported; sign the Authorization header")
        }
        let authorizations = headers.filter { $0.name == "authorization" }
        guard let header = authorizations.first else { throw .missingAuthentication }
        guard authorizations.count == 1 else { throw .incomplete("the request has more than one Authorization header") }
        let authorization = try SigV4Authorization.parse(header.value)
        if headers.contains(where: { $0.name == "x-amz-security-token" }) {
            throw .unsupported("temporary credentials (X-Amz-Security-Token) are not supported")
        }
        guard authorization.region == region else {
            throw .signatureMismatch(SigV4Text.wrongRegion(authorization.region))
        }
        guard authorization.service == service else {
            throw .signatureMismatch(SigV4Text.wrongService(expected: service))
        }
        // AWS reads X-Amz-Date, and the Date header when there is none (in the same basic format).
        guard
            let dateHeader = headers.first(where: { $0.name == "x-amz-date" })
                ?? headers.first(where: { $0.name == "date" }),
            let seconds = SigV4Timestamp.parse(dateHeader.value.trimmingSpaces)
        else {
            throw .incomplete("the request needs an X-Amz-Date header (or a Date header) as yyyyMMdd'T'HHmmss'Z'")
        }
        let timestamp = dateHeader.value.trimmingSpaces
        guard timestamp.hasPrefix(authorization.date) else {
            throw .signatureMismatch(SigV4Text.wrongDate(scope: authorization.date, timestamp: timestamp))
        }
        guard authorization.signedHeaders.contains("host") else { throw .incomplete("the host header must be signed") }
        for name in authorization.signedHeaders where Self.canonicalHeaderValue(name, in: headers) == nil {
            throw .incomplete("the signed header \(SigV4Text.quoted(name)) is not in the request")
        }
        return (authorization, timestamp, seconds)
    }

    /// Whether the target's query carries SigV4 query-string authentication.
    private static func isPresigned(_ target: String) -> Bool {
        guard let questionMark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return false }
        let query = Array(target.utf8[target.utf8.index(after: questionMark)...])
        return query.split(separator: UInt8(ascii: "&")).contains { field in
            let name = field.prefix(while: { $0 != UInt8(ascii: "=") })
            return name.elementsEqual("X-Amz-Signature".utf8) || name.elementsEqual("X-Amz-Algorithm".utf8)
                || name.elementsEqual("X-Amz-Credential".utf8)
        }
    }
}
