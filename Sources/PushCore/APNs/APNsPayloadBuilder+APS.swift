// Writing the `aps` dictionary (docs/providers.md A.4), and what counts as "set" for it.
extension APNsPayloadBuilder {
    static func writeAPS(_ n: NotificationRequest, to writer: inout JSONWriter) {
        writer.beginObject()
        if let alert = n.alert, !alert.isEmptyForAPNs {
            writer.key("alert")
            writeAlert(alert, to: &writer)
        }
        if let badge = n.badge {
            writer.key("badge")
            writer.int(badge)
        }
        writeSound(n, to: &writer)
        writer.member("thread-id", nonEmpty: n.threadID)
        writer.member("category", nonEmpty: n.category)
        if n.contentAvailable {
            writer.key("content-available")
            writer.int(1)
        }
        if n.mutableContent {
            writer.key("mutable-content")
            writer.int(1)
        }
        writer.member("interruption-level", nonEmpty: n.interruptionLevel)
        writer.endObject()
    }

    private static func writeAlert(_ alert: NotificationRequest.Alert, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("title", nonEmpty: alert.title)
        writer.member("subtitle", nonEmpty: alert.subtitle)
        writer.member("body", nonEmpty: alert.body)
        writer.member("launch-image", nonEmpty: alert.launchImage)
        writer.member("title-loc-key", nonEmpty: alert.titleLocKey)
        writer.member("title-loc-args", nonEmpty: alert.titleLocArgs)
        writer.member("loc-key", nonEmpty: alert.locKey)
        writer.member("loc-args", nonEmpty: alert.locArgs)
        writer.member("action-loc-key", nonEmpty: alert.actionLocKey)
        writer.endObject()
    }

    /// `sound`: the name, or the critical sound's dictionary.
    static func writeSound(_ n: NotificationRequest, to writer: inout JSONWriter) {
        guard let critical = n.criticalSound, !n.sound.isEmpty else {
            writer.member("sound", nonEmpty: n.sound)
            return
        }
        writer.key("sound")
        writer.beginObject()
        writer.key("critical")
        writer.int(1)
        writer.member("name", string: n.sound)
        if let volume = critical.volume {
            writer.key("volume")
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
