public import PushCore

extension NotificationRequest {
    /// The domain form of a protobuf notification, field for field; nil when its push type is a
    /// number no ``PushType`` has (the one thing the wire can hold that the domain cannot). Shared
    /// by the gateway and the fuzz targets, so both check the same conversion.
    public init?(proto n: borrowing PushgateV1.Notification) {
        self.init()
        guard withUnsafePointer(to: n, { assign(proto: $0) }) else { return nil }
    }

    /// Sets every field from `n` (a value made with `init()`: the defaults it replaces are empty);
    /// false when `n`'s push type is a number no ``PushType`` has, and then nothing is set.
    ///
    /// In place rather than an initializer: an initializer of a struct this large (from another
    /// module, so not inlined) built the value and then copied it out to the caller, a retain and
    /// a release for each of its two dozen fields, on every notification of every Send. And `n` is
    /// read where it lies: a borrowed notification read out of an array (or through a pointer's
    /// `pointee`) was first copied whole by the caller, the same retain and release per field.
    public mutating func assign(proto pointer: UnsafePointer<PushgateV1.Notification>) -> Bool {
        if pointer.pointee.pushType == .unspecified {
            pushType = nil
        } else if let known = pointer.pointee.pushType.domain {
            pushType = known
        } else {
            return false
        }
        Self.copy(pointer.pointee.app, to: &app)
        if !pointer.pointee.tokens.isEmpty { tokens = pointer.pointee.tokens }
        if let a = pointer.pointee.alert {
            alert = NotificationRequest.Alert(
                title: a.title, subtitle: a.subtitle, body: a.body, launchImage: a.launchImage,
                titleLocKey: a.titleLocKey, titleLocArgs: a.titleLocArgs, locKey: a.locKey, locArgs: a.locArgs,
                image: a.image, actionLocKey: a.actionLocKey)
        }
        badge = pointer.pointee.badge
        Self.copy(pointer.pointee.sound, to: &sound)
        Self.copy(pointer.pointee.category, to: &category)
        Self.copy(pointer.pointee.threadID, to: &threadID)
        contentAvailable = pointer.pointee.contentAvailable
        mutableContent = pointer.pointee.mutableContent
        Self.copy(pointer.pointee.interruptionLevel, to: &interruptionLevel)
        Self.copy(pointer.pointee.dataJSON, to: &dataJSON)
        Self.copy(pointer.pointee.payloadJSON, to: &payloadJSON)
        priority = pointer.pointee.priority
        expiration = pointer.pointee.expiration
        Self.copy(pointer.pointee.collapseID, to: &collapseID)
        Self.copy(pointer.pointee.topic, to: &topic)
        Self.copy(pointer.pointee.id, to: &id)
        Self.copy(pointer.pointee.urgency, to: &urgency)
        if let l = pointer.pointee.liveActivity {
            liveActivity = NotificationRequest.LiveActivity(
                event: l.event, contentStateJSON: l.contentStateJSON, timestamp: l.timestamp,
                staleDate: l.staleDate, dismissalDate: l.dismissalDate, relevanceScore: l.relevanceScore,
                attributesType: l.attributesType, attributesJSON: l.attributesJSON,
                inputPushToken: l.inputPushToken, inputPushChannel: l.inputPushChannel)
        }
        if let c = pointer.pointee.criticalSound { criticalSound = CriticalSound(volume: c.volume) }
        if let f = pointer.pointee.fcm {
            fcm = FCMOptions(
                androidIcon: f.androidIcon, androidColor: f.androidColor, androidTag: f.androidTag,
                androidChannelID: f.androidChannelID, analyticsLabel: f.analyticsLabel)
        }
        return true
    }

    /// `target = source` unless `source` is empty: `target` still holds `init()`'s "" then, and
    /// most fields are not set; the assignment was a retain and a release each for nothing.
    @inline(__always)
    private static func copy(_ source: String, to target: inout String) {
        if !source.isEmpty { target = source }
    }
}

extension PushgateV1.PushType {
    /// The wire enum for a push type (PUSH_TYPE_ALERT is 1, … in the order of ``PushType``).
    public init(_ type: PushType) {
        self.init(rawValue: Int32(PushType.allCases.firstIndex(of: type)! + 1))
    }

    /// The push type, or nil for UNSPECIFIED and unknown numbers.
    public var domain: PushType? {
        let index = Int(rawValue) - 1
        return PushType.allCases.indices.contains(index) ? PushType.allCases[index] : nil
    }
}
