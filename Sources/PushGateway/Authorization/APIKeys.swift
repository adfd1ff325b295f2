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
            let equal = Self.constantTimeEqual(digest, key.sha256)
            if equal && found == nil { found = key }
        }
        return found
    }

    /// Equality of two byte strings whose time depends only on their lengths, never on their contents.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices {
            difference |= a[index] ^ b[index]
        }
        return difference == 0
    }

    /// A fresh key: `pgk_` and 32 random bytes (OpenSSL's CSPRNG) in base64url, with its SHA-256 in
    /// hex, for `pushgate api-key`.
    public static func generate() throws -> (key: String, sha256Hex: String) {
        let key = "pgk_" + base64URLEncode(try SecureRandom.bytes(count: 32))
        return (key, hex(SHA256.hash(key)))
    }

    /// The SHA-256 of `key` in lowercase hex: what `key_sha256` holds.
    public static func sha256Hex(of key: String) -> String { hex(SHA256.hash(key)) }

    /// 64 hex digits (either case) as 32 bytes; nil for anything else.
    public static func parseSHA256Hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        var index = 0
        while index < 64 {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// Lowercase hex of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let alphabet = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(alphabet[Int(byte >> 4)])
            out.append(alphabet[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
