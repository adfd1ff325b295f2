/// The APNs push type, sent as `apns-push-type` (docs/providers.md A.3).
public enum PushType: String, Sendable, CaseIterable {
    case alert, background, voip, complication, fileprovider, mdm, location, liveactivity, pushtotalk
    case widgets, controls

    /// What APNs expects after the bundle id in `apns-topic` for this type.
    ///
    /// Empty for `alert`, `background` and `mdm`. An MDM topic is really the UID from the MDM
    /// certificate, not a bundle id, so MDM callers should set the topic explicitly.
    public var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm: ""
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .location: ".location-query"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The largest payload APNs accepts for this type; larger ones get `413 PayloadTooLarge`.
    public var maxPayloadBytes: Int { self == .voip ? 5120 : 4096 }
}
