public import PushCore
public import PushGRPC
import PushPosix
import PushSync
import PushTLS

/// The apps an API key may send for.
public enum AppGrant: Sendable, Equatable {
    /// `"apps": ["*"]`: every app.
    case all
    /// Exactly these app names.
    case only(Set<String>)

    public func contains(_ app: String) -> Bool {
        switch self {
        case .all: true
        case .only(let names): names.contains(app)
        }
    }
}

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

/// Who is calling, resolved once per call from the `authorization` metadata and the peer address,
/// and what it may do.
///
/// A class, immutable: a call's admission keeps its caller as `any Sendable`, where a struct this
/// size was a box allocated per call (and a cast out of it), and the loopback caller is one shared
/// value.
public final class Caller: Sendable {
    /// The key's name, or `loopback` for a loopback client when no keys are configured.
    public let name: String
    public let isAdmin: Bool
    public let apps: AppGrant

    public init(name: String, isAdmin: Bool, apps: AppGrant) {
        self.name = name
        self.isAdmin = isAdmin
        self.apps = apps
    }

    static let noKeysMessage = "no api_keys configured: only loopback clients are served"

    /// The caller for a call's `authorization` value (nil: absent).
    ///
    /// - With keys configured every client (loopback too) must send `authorization: Bearer <key>`
    ///   for a configured key; otherwise UNAUTHENTICATED, saying what is wrong without the key.
    /// - With no keys configured a loopback client may do everything (the development set-up, and
    ///   what `make run` gives); any other client is UNAUTHENTICATED. An `authorization` header is
    ///   then ignored.
    public static func resolve(
        keys: APIKeys, authorization: String?, isLoopbackPeer: Bool
    ) throws(GRPCStatus) -> Caller {
        guard !keys.isEmpty else { return try loopback(isLoopbackPeer) }
        guard let authorization else {
            throw GRPCStatus(
                .unauthenticated, "authorization: missing; send the metadata \"authorization: Bearer <api key>\"")
        }
        guard let presented = bearerToken(authorization) else {
            throw GRPCStatus(
                .unauthenticated, "authorization: expected \"Bearer <api key>\" (the Bearer scheme and a key)")
        }
        guard let key = keys.match(presented: presented) else {
            throw GRPCStatus(.unauthenticated, "authorization: the API key is not valid (it matches no configured key)")
        }
        return Caller(name: key.name, isAdmin: key.admin, apps: key.apps)
    }

    /// With no keys configured: the loopback caller, or UNAUTHENTICATED for any other peer.
    private static func loopback(_ isLoopbackPeer: Bool) throws(GRPCStatus) -> Caller {
        guard isLoopbackPeer else { throw GRPCStatus(.unauthenticated, noKeysMessage) }
        return loopbackClient
    }

    private static let loopbackClient = Caller(name: "loopback", isAdmin: true, apps: .all)

    /// The caller of a call, from its metadata and peer.
    public static func resolve(keys: APIKeys, context: GRPCCallContext) throws(GRPCStatus) -> Caller {
        // Without keys the metadata is not read (finding `authorization` in it is work per call).
        guard !keys.isEmpty else { return try loopback(context.isLoopbackPeer) }
        return try resolve(
            keys: keys, authorization: context.metadataValue("authorization"), isLoopbackPeer: context.isLoopbackPeer)
    }

    /// The key of `Bearer <key>` (scheme case-insensitive, RFC 6750); nil when malformed or empty.
    static func bearerToken(_ value: String) -> String? {
        let trimmed = value.drop { $0 == " " }
        let scheme = trimmed.prefix { $0 != " " }
        guard scheme.lowercased() == "bearer" else { return nil }
        let token = trimmed.dropFirst(scheme.count).drop { $0 == " " }
        let key = token.reversed().drop { $0 == " " }.reversed()
        guard !key.isEmpty, !key.contains(" ") else { return nil }
        return String(key)
    }

    /// PERMISSION_DENIED unless the key may send for `app`. `field` names where the app came from
    /// (`notifications[2].app`).
    public func requireApp(_ app: String, field: String) throws(GRPCStatus) {
        guard apps.contains(app) else {
            throw GRPCStatus(
                .permissionDenied, "\(field): key \(name.debugDescription) may not send for app \(TextCap.quoted(app))")
        }
    }

    /// PERMISSION_DENIED unless the key is an admin key. `what` names the operation (`CreateTopic`).
    public func requireAdmin(_ what: String) throws(GRPCStatus) {
        guard isAdmin else {
            throw GRPCStatus(
                .permissionDenied,
                "\(what): key \(name.debugDescription) is not an admin key (this needs \"admin\": true)")
        }
    }
}

/// Resolves the ``Caller`` of each call against the configured keys (which SIGHUP may replace).
final class Authorizer: Sendable {
    private let current: Locked<(keys: APIKeys, generation: Int)>

    init(keys: APIKeys) {
        current = Locked((keys, 0))
    }

    var keys: APIKeys { current.withLock { $0.keys } }

    /// Grows with every ``replace(_:)``: a long call compares it to learn that its caller must be
    /// checked again (a key removed by SIGHUP stops working on streams opened before, too).
    var generation: Int { current.withLock { $0.generation } }

    func replace(_ keys: APIKeys) {
        current.withLock { $0 = (keys, $0.generation + 1) }
    }

    func caller(_ context: GRPCCallContext) throws(GRPCStatus) -> Caller {
        try Caller.resolve(keys: keys, context: context)
    }
}
