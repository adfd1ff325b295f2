import PushCore
import PushTLS

/// The `sns` section: the SNS API on the API port (docs/sns.md). Its region and account id make the
/// ARNs; its credentials are the AWS access keys that SigV4-signed requests are checked against.
///
/// ```json
/// "sns": {"region": "us-east-1", "account_id": "123456789012",
///         "credentials": [{"access_key_id": "AKPG…", "secret_access_key_file": "/etc/pushgate/sns.secret",
///                          "apps": ["prod"], "admin": false}]}
/// ```
public struct SNSConfiguration: Sendable {
    /// `region`: the region requests must be signed for, and that ARNs name. Default `us-east-1`.
    public var region = "us-east-1"
    /// `account_id`: the 12-digit account ARNs name. Default `000000000000`.
    public var accountID = "000000000000"
    /// `credentials`: who may call the SNS API; `apps` and `admin` as for `api_keys`.
    public var credentials: [SNSCredential] = []

    public init() {}

    static func parse(
        _ reader: ConfigObject, references: inout [(app: String, path: String)]
    ) throws(ConfigurationError) -> SNSConfiguration {
        var sns = SNSConfiguration()
        try reader.checkKeys(["region", "account_id", "credentials"])
        if let region = try reader.string("region") {
            guard Self.isRegion(region) else {
                throw ConfigurationError(
                    "config.sns.region: expected a region name such as \"us-east-1\" (lowercase letters, digits and -), got \(TextCap.quoted(region))"
                )
            }
            sns.region = region
        }
        if let account = try reader.string("account_id") {
            guard account.utf8.count == 12, account.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw ConfigurationError("config.sns.account_id: expected 12 digits, got \(TextCap.quoted(account))")
            }
            sns.accountID = account
        }
        for (index, entry) in (try reader.array("credentials") ?? []).enumerated() {
            let path = "config.sns.credentials[\(index)]"
            let credential = try SNSCredential.parse(
                ConfigObject(entry, path: path), path: path, references: &references)
            if sns.credentials.contains(where: { $0.accessKeyID == credential.accessKeyID }) {
                throw ConfigurationError("\(path).access_key_id: duplicate access key id \(credential.accessKeyID)")
            }
            sns.credentials.append(credential)
        }
        return sns
    }

    /// `us-east-1`, `eu-central-2`, `us-gov-west-1`: lowercase letters, digits and single hyphens.
    static func isRegion(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...32).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else {
            return false
        }
        return bytes.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-") }
    }

    /// The credential with this access key id.
    public func credential(accessKeyID: String) -> SNSCredential? {
        credentials.first { $0.accessKeyID == accessKeyID }
    }

    var arns: SNSARNs { SNSARNs(region: region, accountID: accountID) }
}

/// One `sns.credentials` entry: an access key id, its secret (read from `secret_access_key_file` at
/// start and on SIGHUP, never logged), and what it may do.
public struct SNSCredential: Sendable {
    public let accessKeyID: String
    let secretAccessKey: String
    public let apps: AppGrant
    public let admin: Bool

    public init(accessKeyID: String, secretAccessKey: String, apps: AppGrant, admin: Bool) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.apps = apps
        self.admin = admin
    }

    static func parse(
        _ entry: ConfigObject, path: String, references: inout [(app: String, path: String)]
    ) throws(ConfigurationError) -> SNSCredential {
        try entry.checkKeys(["access_key_id", "secret_access_key_file", "apps", "admin"])
        guard let id = try entry.string("access_key_id") else {
            throw ConfigurationError("\(path).access_key_id: required (`pushgate sns-credential` makes one)")
        }
        guard (16...128).contains(id.utf8.count),
            id.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) })
        else {
            throw ConfigurationError(
                "\(path).access_key_id: expected 16-128 characters of A-Z and 0-9, got \(TextCap.quoted(id))")
        }
        guard let file = try entry.string("secret_access_key_file"), !file.isEmpty else {
            throw ConfigurationError(
                "\(path).secret_access_key_file: required (a file holding the secret access key)")
        }
        let secret: String
        do {
            secret = try SecretFile.read(file)
        } catch {
            throw ConfigurationError("\(path).secret_access_key_file: \(error)")
        }
        guard secret.utf8.count >= 16, secret.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw ConfigurationError(
                "\(path).secret_access_key_file: the file must hold one secret of at least 16 printable characters"
            )
        }
        let apps = try SecurityConfiguration.appGrant(entry, path: path, references: &references)
        return SNSCredential(
            accessKeyID: id, secretAccessKey: secret, apps: apps, admin: try entry.bool("admin") ?? false)
    }
}

extension SNSCredential {
    /// A fresh pair for `pushgate sns-credential`: an access key id of `AKPG` and 16 base32
    /// characters (80 random bits; 20 characters, as AWS's are), and a 40-character secret
    /// (240 random bits, base64url), both from OpenSSL's CSPRNG.
    public static func generate() throws -> (accessKeyID: String, secretAccessKey: String) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var bits = 0
        var value = 0
        var id = Array("AKPG".utf8)
        for byte in try SecureRandom.bytes(count: 10) {
            value = value << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                id.append(alphabet[(value >> bits) & 31])
            }
        }
        let secret = base64URLEncode(try SecureRandom.bytes(count: 30))
        return (String(decoding: id, as: UTF8.self), secret)
    }
}
