public import PushCore

extension NotificationRequest {
    /// The domain form of a protobuf notification, field for field; nil when its push type is a
    /// number no ``PushType`` has (the one thing the wire can hold that the domain cannot). Shared
    /// by the gateway and the fuzz targets, so both check the same conversion.
    public init?(proto n: borrowing PushgateV1.Notification) {
        self.init()
        guard assign(proto: n) else { return nil }
    }

    /// Sets every field from `n` (a value made with `init()`: the defaults it replaces are empty);
    /// false when `n`'s push type is a number no ``PushType`` has, and then nothing is set.
    ///
    /// In place rather than an initializer: an initializer of a struct this large (from another
    /// module, so not inlined) built the value and then copied it out to the caller, a retain and
    /// a release for each of its two dozen fields, on every notification of every Send.
    public mutating func assign(proto n: borrowing PushgateV1.Notification) -> Bool {
        if n.pushType == .unspecified {
            pushType = nil
        } else if let known = n.pushType.domain {
            pushType = known
        } else {
            return false
        }
        app = n.app
        tokens = n.tokens
        if let a = n.alert {
            alert = NotificationRequest.Alert(
                title: a.title, subtitle: a.subtitle, body: a.body, launchImage: a.launchImage,
                titleLocKey: a.titleLocKey, titleLocArgs: a.titleLocArgs, locKey: a.locKey, locArgs: a.locArgs,
                image: a.image, actionLocKey: a.actionLocKey)
        }
        badge = n.badge
        sound = n.sound
        category = n.category
        threadID = n.threadID
        contentAvailable = n.contentAvailable
        mutableContent = n.mutableContent
        interruptionLevel = n.interruptionLevel
        dataJSON = n.dataJSON
        payloadJSON = n.payloadJSON
        priority = n.priority
        expiration = n.expiration
        collapseID = n.collapseID
        topic = n.topic
        id = n.id
        urgency = n.urgency
        if let l = n.liveActivity {
            liveActivity = NotificationRequest.LiveActivity(
                event: l.event, contentStateJSON: l.contentStateJSON, timestamp: l.timestamp,
                staleDate: l.staleDate, dismissalDate: l.dismissalDate, relevanceScore: l.relevanceScore,
                attributesType: l.attributesType, attributesJSON: l.attributesJSON,
                inputPushToken: l.inputPushToken, inputPushChannel: l.inputPushChannel)
        }
        if let c = n.criticalSound { criticalSound = CriticalSound(volume: c.volume) }
        if let f = n.fcm {
            fcm = FCMOptions(
                androidIcon: f.androidIcon, androidColor: f.androidColor, androidTag: f.androidTag,
                androidChannelID: f.androidChannelID, analyticsLabel: f.analyticsLabel)
        }
        return true
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
