public import PushCore

extension NotificationRequest {
    /// The domain form of a protobuf notification, field for field; nil when its push type is a
    /// number no ``PushType`` has (the one thing the wire can hold that the domain cannot). Shared
    /// by the gateway and the fuzz targets, so both check the same conversion.
    public init?(proto n: borrowing PushgateV1.Notification) {
        let pushType: PushType?
        if n.pushType == .unspecified {
            pushType = nil
        } else if let known = n.pushType.domain {
            pushType = known
        } else {
            return nil
        }
        self.init(
            app: n.app, tokens: n.tokens,
            alert: n.alert.map {
                NotificationRequest.Alert(
                    title: $0.title, subtitle: $0.subtitle, body: $0.body, launchImage: $0.launchImage,
                    titleLocKey: $0.titleLocKey, titleLocArgs: $0.titleLocArgs, locKey: $0.locKey, locArgs: $0.locArgs,
                    image: $0.image, actionLocKey: $0.actionLocKey)
            },
            badge: n.badge, sound: n.sound, category: n.category, threadID: n.threadID,
            contentAvailable: n.contentAvailable, mutableContent: n.mutableContent,
            interruptionLevel: n.interruptionLevel, dataJSON: n.dataJSON, payloadJSON: n.payloadJSON,
            pushType: pushType, priority: n.priority, expiration: n.expiration, collapseID: n.collapseID,
            topic: n.topic, id: n.id, urgency: n.urgency,
            liveActivity: n.liveActivity.map {
                NotificationRequest.LiveActivity(
                    event: $0.event, contentStateJSON: $0.contentStateJSON, timestamp: $0.timestamp,
                    staleDate: $0.staleDate, dismissalDate: $0.dismissalDate, relevanceScore: $0.relevanceScore,
                    attributesType: $0.attributesType, attributesJSON: $0.attributesJSON,
                    inputPushToken: $0.inputPushToken, inputPushChannel: $0.inputPushChannel)
            },
            criticalSound: n.criticalSound.map { CriticalSound(volume: $0.volume) },
            fcm: n.fcm.map {
                FCMOptions(
                    androidIcon: $0.androidIcon, androidColor: $0.androidColor, androidTag: $0.androidTag,
                    androidChannelID: $0.androidChannelID, analyticsLabel: $0.analyticsLabel)
            })
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
