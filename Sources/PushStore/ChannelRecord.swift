/// A Live Activity broadcast channel an app created through Pushgate: APNs's channel id and the
/// storage policy it was created with (APNs does not let it change).
public struct ChannelRecord: Sendable, Equatable {
    /// The app (its configured name) the channel belongs to.
    public var app: String
    /// APNs's `apns-channel-id`.
    public var channelID: String
    /// `message-storage-policy`: 0 (no storage) or 1 (the most recent push).
    public var storagePolicy: Int
    /// When it was created, Unix ms.
    public var createdAt: Int64

    public init(app: String, channelID: String, storagePolicy: Int, createdAt: Int64) {
        self.app = app
        self.channelID = channelID
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
    }
}
