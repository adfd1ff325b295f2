/// One configured API key: `{ "name", "key_sha256", "apps": [...], "admin": bool }`. Only the key's
/// SHA-256 is configured; the key itself is never stored or logged.
public struct APIKey: Sendable {
    /// A label for logs and error messages (never the key).
    public let name: String
    /// SHA-256 of the key's UTF-8 bytes (32 bytes).
    public let sha256: [UInt8]
    public let apps: AppGrant
    /// Admin keys may write the Registry and Publish to topics.
    public let admin: Bool

    public init(name: String, sha256: [UInt8], apps: AppGrant, admin: Bool) {
        self.name = name
        self.sha256 = sha256
        self.apps = apps
        self.admin = admin
    }
}
