/// A platform key of an SNS JSON message (docs/providers.md C.2) that the gateway delivers to.
///
/// Keys are case-sensitive, as in SNS: `"gcm"` is not `GCM`.
public enum PlatformKey: String, Sendable, CaseIterable {
    /// iOS production (APNs `api.push.apple.com`).
    case apns = "APNS"
    /// iOS development (APNs sandbox).
    case apnsSandbox = "APNS_SANDBOX"
    /// Firebase Cloud Messaging; SNS keeps the legacy name.
    case gcm = "GCM"
    /// Amazon Device Messaging (Fire tablets and Fire TV).
    case adm = "ADM"
    /// Browsers' push services (Web Push). Pushgate's own key: SNS has none (it reaches
    /// browsers only through FCM).
    case webpush = "WEBPUSH"
    /// Huawei Push Kit. Pushgate's own key, like `WEBPUSH` (SNS has no Huawei platform).
    case hms = "HMS"
}

/// Where a publish goes; it decides which JSON keys a `json` message must carry.
public enum SNSTarget: Sendable, Equatable {
    /// A topic: every subscriber may need the fallback, so `default` is required.
    case topic
    /// One endpoint (`TargetArn`) of the given platform: `default` or that platform's key will do.
    case endpoint(PlatformKey)
}
