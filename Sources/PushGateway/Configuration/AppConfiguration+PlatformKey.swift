import PushCore

extension AppConfiguration {
    /// The SNS platform key an app's endpoints take their payload from.
    var platformKey: PlatformKey {
        switch keys {
        case .apns(let apns): apns.sandbox ? .apnsSandbox : .apns
        case .fcm: .gcm
        case .adm: .adm
        case .webpush: .webpush
        case .hms: .hms
        }
    }
}
