/// A validated notification ready for its provider: what a Send item or a fan-out page hands to an
/// app's delivery client. The case matches the app's platform.
public enum PreparedPush: Sendable, Equatable {
    case apns(PreparedNotification)
    case fcm(PreparedFCMMessage)
    case adm(PreparedADMMessage)
    case webpush(PreparedWebPushMessage)
    case hms(PreparedHMSMessage)
    /// A request of APNs's channel management API; its one "token" is the channel id (empty for
    /// create and list).
    case apnsChannel(APNsChannelRequest)
    /// A batch of events POSTed to a webhook; its one "token" is the batch's delivery id.
    case webhook(PreparedWebhookPost)

    /// The device tokens, in request order.
    public var tokens: [String] {
        switch self {
        case .apns(let notification): notification.tokens
        case .fcm(let message): message.tokens
        case .adm(let message): message.tokens
        case .webpush(let message): message.tokens
        case .hms(let message): message.tokens
        case .apnsChannel(let request): [request.channelID]
        case .webhook(let post): [post.deliveryID]
        }
    }

    /// The same push for other tokens (a fan-out page reuses one payload for many endpoints).
    public func with(tokens: [String]) -> PreparedPush {
        switch self {
        case .apns(var notification):
            notification.tokens = tokens
            return .apns(notification)
        case .fcm(var message):
            message.tokens = tokens
            return .fcm(message)
        case .adm(var message):
            message.tokens = tokens
            return .adm(message)
        case .webpush(var message):
            message.tokens = tokens
            return .webpush(message)
        case .hms(var message):
            message.tokens = tokens
            return .hms(message)
        case .apnsChannel(var request):
            request.channelID = tokens.first ?? ""
            return .apnsChannel(request)
        case .webhook(var post):
            post.deliveryID = tokens.first ?? ""
            return .webhook(post)
        }
    }
}
