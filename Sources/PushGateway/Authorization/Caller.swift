public import PushCore
public import PushGRPC

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
