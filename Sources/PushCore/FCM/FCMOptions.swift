/// What only FCM carries (`pushgate.v1.FCMOptions`): the Android notification's look and the
/// message's analytics label (docs/providers.md B.2).
public struct FCMOptions: Sendable, Equatable {
    /// `android.notification.icon`: a drawable resource of the app.
    public var androidIcon: String
    /// `android.notification.color`: `#rrggbb`.
    public var androidColor: String
    /// `android.notification.tag`: a later notification with the same tag replaces this one.
    public var androidTag: String
    /// `android.notification.channel_id`: an Android 8+ channel the app created.
    public var androidChannelID: String
    /// `fcm_options.analytics_label`.
    public var analyticsLabel: String

    public init(
        androidIcon: String = "", androidColor: String = "", androidTag: String = "", androidChannelID: String = "",
        analyticsLabel: String = ""
    ) {
        self.androidIcon = androidIcon
        self.androidColor = androidColor
        self.androidTag = androidTag
        self.androidChannelID = androidChannelID
        self.analyticsLabel = analyticsLabel
    }

    var isEmpty: Bool { self == FCMOptions() }

    /// FCM's documented forms: `#rrggbb` for the color, `^[a-zA-Z0-9-_.~%]{1,50}$` for the label.
    func check() throws(ValidationError) {
        let hex = androidColor.utf8.dropFirst()
        if !androidColor.isEmpty,
            androidColor.utf8.first != UInt8(ascii: "#") || hex.count != 6 || !hex.allSatisfy({ hexValue($0) != nil })
        {
            throw ValidationError(field: "fcm.android_color", message: "must be #rrggbb (six hex digits)")
        }
        let labelBytes: Set<UInt8> = Set("-_.~%".utf8)
        if !analyticsLabel.isEmpty,
            analyticsLabel.utf8.count > 50
                || !analyticsLabel.utf8.allSatisfy({ isAlphanumeric($0) || labelBytes.contains($0) })
        {
            throw ValidationError(
                field: "fcm.analytics_label", message: "must be 1 to 50 of the characters a-z A-Z 0-9 - _ . ~ %")
        }
    }
}

private func isAlphanumeric(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
        || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
}

extension NotificationRequest {
    /// Refuses `fcm` for another `provider`: refused rather than dropped.
    func refuseFCMOnlyFields(provider: String) throws(ValidationError) {
        guard fcm?.isEmpty ?? true else {
            throw ValidationError(field: "fcm", message: "is for FCM messages; \(provider) cannot carry it")
        }
    }
}
