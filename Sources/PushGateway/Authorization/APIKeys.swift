import PushCore
import PushTLS

/// The configured API keys and the check of a presented key.
public struct APIKeys: Sendable {
    public var keys: [APIKey]

    public init(_ keys: [APIKey] = []) { self.keys = keys }

    public var isEmpty: Bool { keys.isEmpty }

    /// The key whose configured hash equals SHA-256(`presented`), or nil. The digest is compared with
    /// *every* configured hash in constant time, so the time taken does not depend on how much of a
    /// hash matched (nor, beyond the count of keys, on which key matched).
    public func match(presented: String) -> APIKey? {
        let digest = SHA256.hash(presented)
        var found: APIKey?
        for key in keys {
            let equal = ConstantTime.equal(digest, key.sha256)
            if equal && found == nil { found = key }
        }
        return found
    }

    /// A fresh key: `pgk_` and 32 random bytes (OpenSSL's CSPRNG) in base64url, with its SHA-256 in
    /// hex, for `pushgate api-key`.
    public static func generate() throws -> (key: String, sha256Hex: String) {
        let key = "pgk_" + base64URLEncode(try SecureRandom.bytes(count: 32))
        return (key, Hex.lowercase(SHA256.hash(key)))
    }

    /// The SHA-256 of `key` in lowercase hex: what `key_sha256` holds.
    public static func sha256Hex(of key: String) -> String { Hex.lowercase(SHA256.hash(key)) }

    /// 64 hex digits (either case) as 32 bytes; nil for anything else.
    public static func parseSHA256Hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = Hex.value(digits[index]), let low = Hex.value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
