/// A validated notification with everything the APNs sender needs, computed once: per token the
/// sender only adds `:path`.
///
/// The optional fields are spelled `Optional<…>` on purpose: a `var` of type `T?` starts as nil
/// before the initializer runs, so the initializer's stores were assignments to a value already
/// made, and the optimizer built it aside and copied it out (a retain and a release per field, on
/// every notification).
// swift-format-ignore: UseShorthandTypeNames
public struct PreparedNotification: Sendable, Equatable {
    /// The JSON body shared by every token's request.
    public var payload: [UInt8]
    /// `apns-push-type`: explicit or inferred from the payload.
    public var pushType: PushType
    /// `apns-topic`: explicit, or the bundle id plus the push type's suffix.
    public var topic: String
    /// `apns-priority`: 1, 5 or 10.
    public var priority: Int
    /// `apns-expiration` in Unix seconds; nil sends no header.
    public var expiration: Optional<Int64>
    /// `apns-collapse-id`, at most 64 bytes; nil sends no header.
    public var collapseID: Optional<String>
    /// `apns-id` in lower case; nil lets APNs generate one.
    public var apnsID: Optional<String>
    /// The device tokens, lower-cased, in request order; for a broadcast, the one channel id.
    public var tokens: [String]
    /// A broadcast (`POST /4/broadcasts/apps/<bundle id>`, the token in `apns-channel-id`, no
    /// `apns-topic`): the app's bundle id. nil: a push to device tokens.
    public var broadcastBundleID: Optional<String>

    /// Creates a prepared notification; ``NotificationValidator/prepare(_:at:bundleID:)`` is the
    /// usual source.
    public init(
        payload: [UInt8], pushType: PushType, topic: String, priority: Int, expiration: Int64?,
        collapseID: String?, apnsID: String?, tokens: [String], broadcastBundleID: String? = nil
    ) {
        self.broadcastBundleID = broadcastBundleID
        self.payload = payload
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.tokens = tokens
    }
}
