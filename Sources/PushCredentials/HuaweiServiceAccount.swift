import PushPosix
public import PushTLS

/// A Huawei service-account key file (the JSON the HUAWEI Developers API Console downloads under
/// "Service account key"), as far as Push Kit v3 needs it (docs/providers.md, Huawei H.3):
/// `project_id` (the `{projectId}` of `/v3/{projectId}/messages:send`), `key_id` (the JWT's `kid`),
/// `sub_account` (its `iss`) and `private_key` (RSA, PKCS#8 PEM; PS256). The other members
/// (`token_uri`, `auth_uri`, …) are accepted and ignored. The key never appears in ``description``.
public struct HuaweiServiceAccount: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    public let projectID: String
    public let keyID: String
    public let subAccount: String
    public let privateKey: String

    /// The claims' `aud`, "fixed" in Huawei's page (the key file's `token_uri` holds the same).
    public static let audience = "https://oauth-login.cloud.huawei.com/oauth2/v3/token"

    public init(projectID: String, keyID: String, subAccount: String, privateKey: String) throws(TLSError) {
        self.projectID = projectID
        self.keyID = keyID
        self.subAccount = subAccount
        self.privateKey = privateKey
        try validate(source: "service account")
    }

    /// Reads and parses the key file at `file`; errors start with its path and name the field.
    public init(file: String) throws(TLSError) {
        let source = "service account file \(file)"
        try self.init(json: try CredentialFile.read(file, source: source), source: source)
    }

    public init(json: [UInt8], source: String = "service account JSON") throws(TLSError) {
        let object = try CredentialFile.object(json, source: source)
        func field(_ name: String) throws(TLSError) -> String {
            try CredentialFile.required(name, of: object, source: source)
        }
        projectID = try field("project_id")
        keyID = try field("key_id")
        subAccount = try field("sub_account")
        privateKey = try field("private_key")
        try validate(source: source)
    }

    private func validate(source: String) throws(TLSError) {
        func bad(_ message: String) -> TLSError { TLSError(.invalidInput, "\(source): \(message)") }
        // It goes into a URL path: Huawei's project ids are digits.
        guard projectID.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-") }) else {
            throw bad("project_id must be digits (the project ID of AppGallery Connect)")
        }
        do throws(TLSError) {
            _ = try RSASigner(scheme: .ps256, pem: privateKey)
        } catch {
            throw bad("private_key is not a usable RSA private key (\(error.message))")
        }
    }

    public func signer() throws(TLSError) -> RSASigner { try RSASigner(scheme: .ps256, pem: privateKey) }

    /// The key file as Huawei's console writes it (for `pushgate mock-hms --write-service-account`).
    public func serialized() -> [UInt8] {
        FlatJSONObject.serialize([
            ("project_id", .string(projectID)), ("key_id", .string(keyID)), ("private_key", .string(privateKey)),
            ("sub_account", .string(subAccount)),
            ("auth_uri", .string("https://oauth-login.cloud.huawei.com/oauth2/v3/authorize")),
            ("token_uri", .string(Self.audience)),
            ("auth_provider_cert_uri", .string("https://oauth-login.cloud.huawei.com/oauth2/v3/certs")),
            ("client_cert_uri", .string("https://oauth-login.cloud.huawei.com/oauth2/v3/x509?client_id=")),
        ]) + [0x0A]
    }

    public var description: String {
        "HuaweiServiceAccount(project_id: \(projectID), key_id: \(keyID), sub_account: \(subAccount))"
    }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "projectID": projectID, "keyID": keyID, "subAccount": subAccount, "privateKey": "<redacted>",
            ])
    }
}
