/// APNs's critical alert sound (`pushgate.v1.CriticalSound`): the notification's `sound` played
/// even when the device is muted, as `"sound":{"critical":1,"name":…,"volume":…}`. Apple grants
/// the Critical Alerts entitlement per app; without it the device plays an ordinary sound.
public struct CriticalSound: Sendable, Equatable {
    /// 0 (silent) to 1 (full volume); nil: the system's choice.
    public var volume: Double?

    public init(volume: Double? = nil) { self.volume = volume }
}

extension NotificationRequest {
    /// `critical_sound` needs the sound's name, and a volume APNs takes.
    func checkCriticalSound() throws(ValidationError) {
        guard let criticalSound else { return }
        guard !sound.isEmpty else {
            throw ValidationError(
                field: "critical_sound", message: "needs sound: the sound file's name, or \"default\"")
        }
        if let volume = criticalSound.volume, !(0...1).contains(volume) {
            throw ValidationError(field: "critical_sound.volume", message: "must be between 0 and 1")
        }
    }
}
