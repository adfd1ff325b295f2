/// What APNs keeps of a broadcast channel's pushes for devices that are offline
/// (`message-storage-policy`, docs/providers.md A.9).
public enum MessageStoragePolicy: Int, Sendable, Hashable, CaseIterable {
    /// 0: nothing is stored; every broadcast on the channel must have `apns-expiration: 0`.
    case noStorage = 0
    /// 1: the most recent push is stored and delivered when a device comes back.
    case mostRecent = 1
}

/// A broadcast channel id as APNs issues it (`apns-channel-id`): base64 text. Checked before it
/// goes into a header or the registry: 1-256 characters of the base64 alphabet (`A-Z a-z 0-9 + /`,
/// `=` padding at the end only). Apple documents no length; the bound keeps headers and keys small.
public enum ChannelID {
    /// The error text for a malformed id, used verbatim in validation messages.
    public static let requirement =
        "must be an APNs channel id: 1-256 characters of base64 (A-Z a-z 0-9 + / and = padding)"
    public static let maxLength = 256

    /// Whether `text` has the shape of a channel id.
    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        var padding = 0
        for byte in bytes {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            // Padding only at the end.
            guard padding == 0, isBase64Byte(byte) else { return false }
        }
        return padding <= 2
    }

    private static func isBase64Byte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default: false
        }
    }
}

/// One request of Apple's channel management API (`api-manage-broadcast.push.apple.com`): what the
/// APNs dialect writes as `<method> /1/apps/<bundle id>/channels` (or `/all-channels`), with the
/// channel in `apns-channel-id` (docs/providers.md A.9).
public struct APNsChannelRequest: Sendable, Equatable {
    public enum Operation: Sendable, Equatable {
        /// POST …/channels with `{"message-storage-policy":N,"push-type":"LiveActivity"}`; the answer's
        /// `apns-channel-id` names the new channel.
        case create(MessageStoragePolicy)
        /// GET …/channels with `apns-channel-id`.
        case read
        /// DELETE …/channels with `apns-channel-id`.
        case delete
        /// GET …/all-channels: every channel of the app.
        case list
    }

    public var operation: Operation
    public var bundleID: String
    /// The channel for read and delete; empty for create and list.
    public var channelID: String
    /// `apns-request-id`, a lowercase UUID; nil: APNs makes one.
    public var requestID: String?

    public init(_ operation: Operation, bundleID: String, channelID: String = "", requestID: String? = nil) {
        self.operation = operation
        self.bundleID = bundleID
        self.channelID = channelID
        self.requestID = requestID
    }

    /// `:method`.
    public var method: String {
        switch operation {
        case .create: "POST"
        case .read, .list: "GET"
        case .delete: "DELETE"
        }
    }

    /// `:path`.
    public var path: String {
        switch operation {
        case .list: "/1/apps/\(bundleID)/all-channels"
        default: "/1/apps/\(bundleID)/channels"
        }
    }

    /// Whether `apns-channel-id` is sent (read and delete).
    public var namesChannel: Bool {
        switch operation {
        case .read, .delete: true
        case .create, .list: false
        }
    }

    /// The request body: the create's JSON object, else empty.
    public var body: [UInt8] {
        guard case .create(let policy) = operation else { return [] }
        return Array(#"{"message-storage-policy":\#(policy.rawValue),"push-type":"LiveActivity"}"#.utf8)
    }
}

/// APNs's answers that a channel does not exist for it (any more): `ChannelNotRegistered` and
/// `BadChannelId`, both 400 (docs/providers.md A.9, A.10; Apple sends 404 only for `BadPath`). The
/// registry then forgets the channel and the caller gets NOT_FOUND.
public enum ChannelGone {
    public static let reasons: Set<String> = ["ChannelNotRegistered", "BadChannelId"]

    /// Whether a refusal with `reason` says the channel is gone.
    public static func matches(reason: String) -> Bool { reasons.contains(reason) }
}
