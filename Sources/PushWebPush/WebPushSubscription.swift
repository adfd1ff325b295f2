public import PushCore
public import PushTLS
public import PushTransport

/// A browser's push subscription, the token of a Web Push endpoint: exactly what
/// `PushSubscription.toJSON()` gives, as JSON text:
/// `{"endpoint":"https://…","expirationTime":null,"keys":{"p256dh":"…","auth":"…"}}`.
///
/// Checked before anything is sent (docs/providers.md F.1, F.8): the endpoint an `https` URL on a host
/// the app's ``WebPushHostPolicy`` allows, `p256dh` a point on P-256 (65 bytes, uncompressed),
/// `auth` 16 bytes, both base64url (padding and `+` `/` tolerated); `expirationTime` null or a number; no
/// other member. Errors name the member (`tokens[3].keys.auth: …`).
public struct WebPushSubscription: Sendable, Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        a.endpoint == b.endpoint && a.p256dh == b.p256dh && a.auth == b.auth
    }

    /// The push service's URL for this subscription, as given.
    public let endpoint: String
    /// Where it is sent.
    public let origin: HTTPSOrigin
    /// The request target: the endpoint's path and query.
    public let target: String
    /// The subscription's public key, 65 bytes (0x04 ‖ x ‖ y), on P-256.
    public let p256dh: [UInt8]
    /// The subscription's authentication secret, 16 bytes.
    public let auth: [UInt8]
    /// ``p256dh`` as a key, for the ECDH.
    public let receiverKey: P256KeyAgreementKey

    /// The longest subscription text accepted, in bytes (real ones are 200 to 600).
    public static let maxBytes = 4096
    /// The longest endpoint URL accepted, in bytes.
    public static let maxEndpointBytes = 2048

    /// Parses and checks `token`.
    /// - Parameter field: the token's place in the request (`notifications[0].tokens[2]`).
    public init(_ token: String, field: String, hosts: WebPushHostPolicy) throws(ValidationError) {
        guard token.utf8.count <= Self.maxBytes else {
            throw ValidationError(
                field: field,
                message: "is \(token.utf8.count) bytes; a Web Push subscription is at most \(Self.maxBytes)")
        }
        let document: JSONValue
        do throws(JSONError) {
            document = try JSONParser.parse(token.utf8)
        } catch {
            throw ValidationError(
                field: field, message: "must be a push subscription as PushSubscription.toJSON() gives it: \(error)")
        }
        guard let members = document.objectMembers else {
            throw ValidationError(
                field: field, message: "must be a JSON object {\"endpoint\": …, \"keys\": {\"p256dh\": …, \"auth\": …}}"
            )
        }
        for (key, value) in members {
            switch key {
            case "endpoint", "keys": continue
            case "expirationTime":
                switch value {
                case .null, .number: continue
                default: throw ValidationError(field: "\(field).expirationTime", message: "must be null or a number")
                }
            default:
                throw ValidationError(
                    field: "\(field).\(key)",
                    message: "is not a member of a push subscription (endpoint, keys, expirationTime)")
            }
        }
        guard case .string(let endpoint)? = document["endpoint"] else {
            throw ValidationError(field: "\(field).endpoint", message: "is required: the push service's https URL")
        }
        (origin, target) = try Self.split(endpoint, field: "\(field).endpoint", hosts: hosts)
        self.endpoint = endpoint
        guard let keys = document["keys"], let keyMembers = keys.objectMembers else {
            throw ValidationError(field: "\(field).keys", message: "is required: an object with p256dh and auth")
        }
        if let other = keyMembers.first(where: { $0.0 != "p256dh" && $0.0 != "auth" }) {
            throw ValidationError(
                field: "\(field).keys.\(other.0)", message: "is not a subscription key (p256dh, auth)")
        }
        let point = try Self.bytes(keys["p256dh"], field: "\(field).keys.p256dh", count: 65)
        guard let key = P256KeyAgreementKey.publicKey(point: point) else {
            throw ValidationError(
                field: "\(field).keys.p256dh", message: "is not a point on P-256 (65 bytes, uncompressed: 0x04 ‖ x ‖ y)"
            )
        }
        p256dh = point
        receiverKey = key
        auth = try Self.bytes(keys["auth"], field: "\(field).keys.auth", count: 16)
    }

    /// The subscription in the one form the registry stores: endpoint and keys only, keys in
    /// unpadded base64url, so that one browser subscription is one endpoint however it was spelled.
    public var canonicalJSON: String {
        var writer = JSONWriter(reservingCapacity: endpoint.utf8.count + 160)
        writer.beginObject()
        writer.key("endpoint")
        writer.string(endpoint)
        writer.key("keys")
        writer.beginObject()
        writer.key("p256dh")
        writer.string(base64URLEncode(p256dh))
        writer.key("auth")
        writer.string(base64URLEncode(auth))
        writer.endObject()
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The endpoint's origin and request target, or the error: `https://`, an authority
    /// ``HTTPSOrigin`` accepts (no user, a port 1-65535), a host the policy allows, then a path
    /// (and query) of URL bytes only, no fragment.
    static func split(
        _ endpoint: String, field: String, hosts: WebPushHostPolicy
    ) throws(ValidationError) -> (HTTPSOrigin, String) {
        let bytes = Array(endpoint.utf8)
        guard bytes.count <= maxEndpointBytes else {
            throw ValidationError(field: field, message: "is \(bytes.count) bytes; at most \(maxEndpointBytes)")
        }
        let scheme = Array("https://".utf8)
        guard bytes.starts(with: scheme) else {
            throw ValidationError(field: field, message: "must be an https:// URL, got \(TextCap.quoted(endpoint))")
        }
        let rest = bytes[scheme.count...]
        let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let authority = String(decoding: rest[..<slash], as: UTF8.self)
        guard let origin = HTTPSOrigin(url: "https://" + authority) else {
            throw ValidationError(
                field: field, message: "has no valid host[:port] (\(TextCap.quoted(authority, maxCharacters: 64)))")
        }
        if let refusal = hosts.refusal(of: origin) { throw ValidationError(field: field, message: refusal) }
        let target = rest[slash...]
        guard !target.isEmpty else { throw ValidationError(field: field, message: "has no path") }
        if let bad = target.firstIndex(where: { !isTargetByte($0) }) {
            throw ValidationError(
                field: field,
                message: "has a byte not allowed in a URL path at offset \(bad) (0x\(String(bytes[bad], radix: 16)))")
        }
        return (origin, String(decoding: target, as: UTF8.self))
    }

    /// RFC 3986 `pchar`, `/` and `?` (WNS endpoints carry a query), `%` for escapes: no space,
    /// no quote, no fragment, no control byte, nothing that could end a header or request line.
    private static func isTargetByte(_ byte: UInt8) -> Bool {
        targetBytes.contains(byte)
    }

    private static let targetBytes = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?%".utf8)

    /// A key member's bytes: base64url, with `=` padding and the standard alphabet's `+` and `/`
    /// tolerated (pages that encode `getKey()` with `btoa()` send them, F.8).
    private static func bytes(_ value: JSONValue?, field: String, count: Int) throws(ValidationError) -> [UInt8] {
        guard case .string(var text)? = value else {
            throw ValidationError(field: field, message: "is required: \(count) bytes in base64url")
        }
        while text.hasSuffix("=") { text.removeLast() }
        text = String(text.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        guard let decoded = base64URLDecode(text) else {
            throw ValidationError(field: field, message: "is not base64url (A-Za-z0-9-_)")
        }
        guard decoded.count == count else {
            throw ValidationError(field: field, message: "is \(decoded.count) bytes; it must be \(count)")
        }
        return decoded
    }
}
