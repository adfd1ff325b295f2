public import PushTransport

extension HTTPSOrigin {
    /// FCM's production host (docs/providers.md B).
    public static let fcmProduction = HTTPSOrigin(host: "fcm.googleapis.com", port: 443)
}
