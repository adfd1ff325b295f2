public import PushCore
public import PushTransport

extension HTTPSOrigin {
    /// The engine's home pool of a Web Push app, which has no endpoint of its own: Chrome's push
    /// service, where most subscriptions point (docs/providers.md F.1). Every other push service
    /// gets a pool when a subscription names it.
    public static let webPushHome = HTTPSOrigin(host: "fcm.googleapis.com", port: 443)
}

extension WebPushSubscription {
    /// Checks every subscription of a notification (`tokens[i]`); the first bad one's error.
    public static func validate(tokens: [String], hosts: WebPushHostPolicy) throws(ValidationError) {
        for (index, token) in tokens.enumerated() {
            _ = try WebPushSubscription(token, field: "tokens[\(index)]", hosts: hosts)
        }
    }
}
