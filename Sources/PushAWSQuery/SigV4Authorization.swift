import PushCore

/// The parsed `Authorization` header of a Signature Version 4 request.
public struct SigV4Authorization: Sendable, Equatable {
    public var accessKeyID: String
    /// The credential scope's date, `yyyyMMdd`.
    public var date: String
    public var region: String
    public var service: String
    /// Lowercase header names, as listed (SDKs list them sorted).
    public var signedHeaders: [String]
    /// Lowercase hex, 64 digits.
    public var signature: String

    public init(
        accessKeyID: String, date: String, region: String, service: String, signedHeaders: [String],
        signature: String
    ) {
        self.accessKeyID = accessKeyID
        self.date = date
        self.region = region
        self.service = service
        self.signedHeaders = signedHeaders
        self.signature = signature
    }

    static let algorithm = "AWS4-HMAC-SHA256"
    static let terminator = "aws4_request"

    /// Parses `AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/sns/aws4_request,
    /// SignedHeaders=a;b, Signature=hex` (spaces after the commas optional).
    ///
    /// - Throws: ``SigV4Failure/unsupported(_:)`` for another scheme or algorithm,
    ///   ``SigV4Failure/signatureMismatch(_:)`` for a terminator other than `aws4_request`, and
    ///   ``SigV4Failure/incomplete(_:)`` for anything else malformed or missing.
    /// The most header names a signature may sign (SDKs sign 3 to 8).
    public static let maxSignedHeaders = 64

    public static func parse(_ header: String) throws(SigV4Failure) -> SigV4Authorization {
        let text = header.trimmingSpaces
        let schemeEnd = text.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? text.endIndex
        let scheme = text[..<schemeEnd]
        guard scheme == algorithm else {
            throw .unsupported("the authorization scheme \(SigV4Text.quoted(scheme)); only \(algorithm) is supported")
        }
        var components: [String: String] = [:]
        for part in text[schemeEnd...].split(separator: ",", omittingEmptySubsequences: false) {
            let component = String(part).trimmingSpaces
            guard let equals = component.firstIndex(of: "=") else {
                throw .incomplete("the Authorization component \(SigV4Text.quoted(component)) is not name=value")
            }
            let name = String(component[..<equals])
            guard ["Credential", "SignedHeaders", "Signature"].contains(name) else {
                throw .incomplete("the Authorization component \(SigV4Text.quoted(name)) is unknown")
            }
            guard components[name] == nil else { throw .incomplete("Authorization has \(name) twice") }
            components[name] = String(component[component.index(after: equals)...])
        }
        guard let credential = components["Credential"], let signedHeaders = components["SignedHeaders"],
            let signature = components["Signature"]
        else {
            let missing = ["Credential", "SignedHeaders", "Signature"].filter { components[$0] == nil }
            throw .incomplete("Authorization header requires \(missing.map { "'\($0)'" }.joined(separator: ", "))")
        }
        let scope = credential.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard scope.count == 5, scope.allSatisfy({ !$0.isEmpty }) else {
            throw .incomplete(
                "the Credential must be access-key/yyyyMMdd/region/service/aws4_request, not \(scope.count) parts")
        }
        guard scope[1].utf8.count == 8, scope[1].utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw .incomplete("the Credential's date \(SigV4Text.quoted(scope[1])) is not yyyyMMdd")
        }
        guard scope[4] == terminator else { throw .signatureMismatch(SigV4Text.wrongTerminator(scope[4])) }
        let headerNames = signedHeaders.split(separator: ";", omittingEmptySubsequences: false).map {
            $0.lowercased()
        }
        guard headerNames.allSatisfy({ !$0.isEmpty }) else {
            throw .incomplete("SignedHeaders has an empty name")
        }
        // Each name costs a look through the request's headers: bounded before anything is checked.
        guard headerNames.count <= maxSignedHeaders else {
            throw .incomplete("SignedHeaders names \(headerNames.count) headers, over the limit of \(maxSignedHeaders)")
        }
        let hexSignature = signature.lowercased()
        guard hexSignature.utf8.count == 64, hexSignature.utf8.allSatisfy({ Hex.value($0) != nil })
        else { throw .incomplete("the Signature is not 64 hex digits") }
        return SigV4Authorization(
            accessKeyID: scope[0], date: scope[1], region: scope[2], service: scope[3], signedHeaders: headerNames,
            signature: hexSignature)
    }
}
