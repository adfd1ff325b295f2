import PushPosix
public import PushTLS

/// A Google service-account key file (the JSON the Firebase console downloads), as far as the
/// OAuth2 JWT-bearer flow needs it (docs/providers.md B.5).
///
/// Other members (`client_id`, `auth_uri`, `universe_domain`, …) are accepted and ignored.
/// The private key never appears in ``description``, in a `dump`, or in an error message.
public struct GoogleServiceAccount: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// Always `service_account` (other credential types are refused).
    public let type: String
    /// `project_id`: the project in `/v1/projects/{project_id}/messages:send`.
    public let projectID: String
    /// `private_key_id`: the JWT header's `kid`.
    public let privateKeyID: String
    /// `private_key`: an RSA private key, PKCS#8 PEM.
    public let privateKey: String
    /// `client_email`: the assertion's `iss`.
    public let clientEmail: String
    /// `token_uri`: where assertions are exchanged for access tokens, and their `aud`.
    public let tokenURI: String

    /// A service account from its parts, checked as a file's would be.
    public init(
        projectID: String, privateKeyID: String, privateKey: String, clientEmail: String, tokenURI: String
    ) throws(TLSError) {
        type = "service_account"
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
        try validate(source: "service account")
    }

    /// Parses the JSON of a service-account file. Errors name the field that is missing or bad.
    public init(json: [UInt8]) throws(TLSError) {
        try self.init(json: json, source: "service account JSON")
    }

    /// Reads and parses the service-account file at `file`; errors start with its path.
    public init(file: String) throws(TLSError) {
        let source = "service account file \(file)"
        try self.init(json: try CredentialFile.read(file, source: source), source: source)
    }

    private init(json: [UInt8], source: String) throws(TLSError) {
        let object = try CredentialFile.object(json, source: source)
        func field(_ name: String) throws(TLSError) -> String {
            try CredentialFile.required(name, of: object, source: source)
        }
        type = try field("type")
        projectID = try field("project_id")
        privateKeyID = try field("private_key_id")
        privateKey = try field("private_key")
        clientEmail = try field("client_email")
        tokenURI = try field("token_uri")
        try validate(source: source)
    }

    private func validate(source: String) throws(TLSError) {
        func bad(_ message: String) -> TLSError { TLSError(.invalidInput, "\(source): \(message)") }
        guard type == "service_account" else { throw bad("type must be \"service_account\", got \"\(type)\"") }
        // The id goes into a URL path; Google's are [a-z0-9-] (or "domain:project").
        guard !projectID.isEmpty, projectID.utf8.allSatisfy(isProjectIDByte) else {
            throw bad("project_id must be letters, digits, '-', '.' or ':'")
        }
        guard !privateKeyID.isEmpty else { throw bad("private_key_id is empty") }
        guard clientEmail.contains("@") else { throw bad("client_email must be an email address") }
        guard tokenURI.hasPrefix("https://") || tokenURI.hasPrefix("http://") else {
            throw bad("token_uri must be an http(s) URL")
        }
        do throws(TLSError) {
            _ = try RSASigner(scheme: .rs256, pem: privateKey)
        } catch {
            // OpenSSL's text names the parse failure, never the key material.
            throw bad("private_key is not a usable RSA private key (\(error.message))")
        }
    }

    /// The signer for this account's key.
    public func signer() throws(TLSError) -> RSASigner { try RSASigner(scheme: .rs256, pem: privateKey) }

    /// The verifier for this account's public half (what Google, or the mock, checks with).
    public func verifier() throws(TLSError) -> RSAVerifier {
        try RSAVerifier(scheme: .rs256, privateKeyPEM: privateKey)
    }

    /// The service-account JSON, members in the order Google writes them.
    public func serialized() -> [UInt8] {
        FlatJSONObject.serialize([
            ("type", .string(type)), ("project_id", .string(projectID)), ("private_key_id", .string(privateKeyID)),
            ("private_key", .string(privateKey)), ("client_email", .string(clientEmail)),
            ("token_uri", .string(tokenURI)),
        ]) + [0x0A]
    }

    /// Everything but the private key.
    public var description: String {
        "GoogleServiceAccount(project_id: \(projectID), client_email: \(clientEmail), "
            + "private_key_id: \(privateKeyID), token_uri: \(tokenURI))"
    }

    /// Keeps `dump` and debuggers from printing the private key.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "projectID": projectID, "clientEmail": clientEmail, "privateKeyID": privateKeyID,
                "tokenURI": tokenURI, "privateKey": "<redacted>",
            ])
    }

    private func isProjectIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"):
            true
        default: false
        }
    }
}
