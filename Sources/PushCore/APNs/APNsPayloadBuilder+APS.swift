// Writing the `aps` dictionary (docs/providers.md A.4), and what counts as "set" for it.
extension APNsPayloadBuilder {
    static func writeAPS(_ n: NotificationRequest, to writer: inout JSONWriter) {
        writer.beginObject()
        if let alert = n.alert, !alert.isEmptyForAPNs {
            writer.key(APSKeys.alert)
            writeAlert(alert, to: &writer)
        }
        if let badge = n.badge {
            writer.key(APSKeys.badge)
            writer.int(badge)
        }
        writeSound(n, to: &writer)
        writer.member(APSKeys.threadID, nonEmpty: n.threadID)
        writer.member(APSKeys.category, nonEmpty: n.category)
        if n.contentAvailable {
            writer.key(APSKeys.contentAvailable)
            writer.int(1)
        }
        if n.mutableContent {
            writer.key(APSKeys.mutableContent)
            writer.int(1)
        }
        writer.member(APSKeys.interruptionLevel, nonEmpty: n.interruptionLevel)
        writer.endObject()
    }

    private static func writeAlert(_ alert: NotificationRequest.Alert, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member(APSKeys.title, nonEmpty: alert.title)
        writer.member(APSKeys.subtitle, nonEmpty: alert.subtitle)
        writer.member(APSKeys.body, nonEmpty: alert.body)
        writer.member(APSKeys.launchImage, nonEmpty: alert.launchImage)
        writer.member(APSKeys.titleLocKey, nonEmpty: alert.titleLocKey)
        writer.member(APSKeys.titleLocArgs, nonEmpty: alert.titleLocArgs)
        writer.member(APSKeys.locKey, nonEmpty: alert.locKey)
        writer.member(APSKeys.locArgs, nonEmpty: alert.locArgs)
        writer.member(APSKeys.actionLocKey, nonEmpty: alert.actionLocKey)
        writer.endObject()
    }

    /// `sound`: the name, or the critical sound's dictionary.
    static func writeSound(_ n: NotificationRequest, to writer: inout JSONWriter) {
        guard let critical = n.criticalSound, !n.sound.isEmpty else {
            writer.member(APSKeys.sound, nonEmpty: n.sound)
            return
        }
        writer.key(APSKeys.sound)
        writer.beginObject()
        writer.key(APSKeys.critical)
        writer.int(1)
        writer.member(APSKeys.name, string: n.sound)
        if let volume = critical.volume {
            writer.key(APSKeys.volume)
            writer.value(.number("\(volume)"))
        }
        writer.endObject()
    }

}

extension NotificationRequest {
    /// True when the fields would build `"aps":{}`.
    var apsIsEmpty: Bool { !contentAvailable && apsIsEmptyIgnoringContentAvailable }

    /// True when no `aps` field other than `content-available` is set.
    var apsIsEmptyIgnoringContentAvailable: Bool {
        (alert?.isEmptyForAPNs ?? true) && badge == nil && sound.isEmpty && threadID.isEmpty && category.isEmpty
            && !mutableContent && interruptionLevel.isEmpty
    }

    /// The first payload-building field that is set, by its proto name; these must stay empty
    /// when `payload_json` supplies the whole payload.
    var firstPayloadBuildingField: String? {
        if !(alert?.isEmptyForAPNs ?? true) { return "alert" }
        if badge != nil { return "badge" }
        if !sound.isEmpty { return "sound" }
        if criticalSound != nil { return "critical_sound" }
        if !category.isEmpty { return "category" }
        if !threadID.isEmpty { return "thread_id" }
        if contentAvailable { return "content_available" }
        if mutableContent { return "mutable_content" }
        if !interruptionLevel.isEmpty { return "interruption_level" }
        if !dataJSON.isEmpty { return "data_json" }
        return nil
    }
}

/// The `aps` keys, quoted once (``JSONWriter/Key``).
private enum APSKeys {
    static let actionLocKey = JSONWriter.Key("action-loc-key")
    static let alert = JSONWriter.Key("alert")
    static let badge = JSONWriter.Key("badge")
    static let body = JSONWriter.Key("body")
    static let category = JSONWriter.Key("category")
    static let contentAvailable = JSONWriter.Key("content-available")
    static let critical = JSONWriter.Key("critical")
    static let interruptionLevel = JSONWriter.Key("interruption-level")
    static let launchImage = JSONWriter.Key("launch-image")
    static let locArgs = JSONWriter.Key("loc-args")
    static let locKey = JSONWriter.Key("loc-key")
    static let mutableContent = JSONWriter.Key("mutable-content")
    static let name = JSONWriter.Key("name")
    static let sound = JSONWriter.Key("sound")
    static let subtitle = JSONWriter.Key("subtitle")
    static let threadID = JSONWriter.Key("thread-id")
    static let title = JSONWriter.Key("title")
    static let titleLocArgs = JSONWriter.Key("title-loc-args")
    static let titleLocKey = JSONWriter.Key("title-loc-key")
    static let volume = JSONWriter.Key("volume")
}
