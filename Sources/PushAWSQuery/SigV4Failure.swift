/// Why a request's Signature Version 4 authentication was refused. The texts follow what AWS
/// answers where we know it (``SigV4Text``); none ever holds a secret or a derived key.
public enum SigV4Failure: Error, Sendable, Equatable, CustomStringConvertible {
    /// No Authorization header.
    case missingAuthentication
    /// A malformed Authorization header or credential scope, no usable X-Amz-Date (or Date), `host`
    /// not signed, or a signed header absent.
    case incomplete(String)
    /// The access key id is not one we know.
    case unknownAccessKey
    /// The wrong scope (region, service, terminator, or a date other than X-Amz-Date's), a payload
    /// hash header that is not the body's, or a signature that differs.
    case signatureMismatch(String)
    /// X-Amz-Date is outside the allowed clock skew, in AWS's words.
    case expired(String)
    /// Query-string (presigned) authentication, temporary credentials (X-Amz-Security-Token), or
    /// another algorithm.
    case unsupported(String)

    public var description: String {
        switch self {
        case .missingAuthentication: "missing authentication: no Authorization header"
        case .incomplete(let text): "incomplete signature: \(text)"
        case .unknownAccessKey: "unknown access key: \(SigV4Text.unknownAccessKey)"
        case .signatureMismatch(let text): "signature mismatch: \(text)"
        case .expired(let text): "expired: \(text)"
        case .unsupported(let text): "unsupported: \(text)"
        }
    }
}

/// The texts of the failures, in one place: AWS's wording where we know it.
enum SigV4Text {
    /// AWS's InvalidClientTokenId text.
    static let unknownAccessKey = "The security token included in the request is invalid."

    /// AWS's SignatureDoesNotMatch text.
    static let signatureDiffers =
        "The request signature we calculated does not match the signature you provided. Check your AWS Secret"
        + " Access Key and signing method. Consult the service documentation for details."

    static let payloadHashDiffers = "The provided 'x-amz-content-sha256' header does not match what was computed."

    static func wrongRegion(_ region: String) -> String {
        "Credential should be scoped to a valid region, not \(quoted(region))."
    }

    static func wrongService(expected: String) -> String {
        "Credential should be scoped to correct service: \(quoted(expected))."
    }

    static func wrongTerminator(_ terminator: String) -> String {
        "Credential should be scoped with a valid terminator: 'aws4_request', not \(quoted(terminator))."
    }

    static func wrongDate(scope: String, timestamp: String) -> String {
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP:"
            + " \(quoted(scope)) != \(quoted(String(timestamp.prefix(8)))), from \(quoted(timestamp))."
    }

    /// AWS's text for a request signed too long ago: "Signature expired: 20150830T123600Z is now
    /// earlier than 20150830T124100Z (20150830T125100Z - 15 min.)".
    static func expired(timestamp: String, now: Int64, skewSeconds: Int64) -> String {
        "Signature expired: \(timestamp) is now earlier than \(SigV4Timestamp.format(now - skewSeconds))"
            + " (\(SigV4Timestamp.format(now)) - \(minutes(skewSeconds)))"
    }

    /// AWS's text for a request dated too far ahead: "Signature not yet current: 20150830T130000Z is
    /// still later than 20150830T125100Z (20150830T123600Z + 15 min.)".
    static func notYetCurrent(timestamp: String, now: Int64, skewSeconds: Int64) -> String {
        "Signature not yet current: \(timestamp) is still later than \(SigV4Timestamp.format(now + skewSeconds))"
            + " (\(SigV4Timestamp.format(now)) + \(minutes(skewSeconds)))"
    }

    private static func minutes(_ seconds: Int64) -> String {
        seconds % 60 == 0 ? "\(seconds / 60) min." : "\(seconds) s"
    }

    /// Client-supplied text in single quotes as AWS writes it, cut to 40 characters.
    static func quoted(_ text: some StringProtocol) -> String {
        let shown = QueryFormError.quoted(text)
        return "'" + shown.dropFirst().dropLast() + "'"
    }
}
