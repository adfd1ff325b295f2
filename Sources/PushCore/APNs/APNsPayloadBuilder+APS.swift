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
        writeString("sound", n.sound, to: &writer)
        writeString("thread-id", n.threadID, to: &writer)
        writeString("category", n.category, to: &writer)
        if n.contentAvailable {
            writer.key("content-available")
            writer.int(1)
        }
        if n.mutableContent {
            writer.key("mutable-content")
            writer.int(1)
        }
        writeString("interruption-level", n.interruptionLevel, to: &writer)
        writer.endObject()
    }

    private static func writeAlert(_ alert: NotificationRequest.Alert, to writer: inout JSONWriter) {
        writer.beginObject()
        writeString("title", alert.title, to: &writer)
        writeString("subtitle", alert.subtitle, to: &writer)
        writeString("body", alert.body, to: &writer)
        writeString("launch-image", alert.launchImage, to: &writer)
        writeString("title-loc-key", alert.titleLocKey, to: &writer)
        writeStrings("title-loc-args", alert.titleLocArgs, to: &writer)
        writeString("loc-key", alert.locKey, to: &writer)
        writeStrings("loc-args", alert.locArgs, to: &writer)
        writer.endObject()
    }

    private static func writeString(_ key: String, _ value: String, to writer: inout JSONWriter) {
        guard !value.isEmpty else { return }
        writer.key(key)
        writer.string(value)
    }

    private static func writeStrings(_ key: String, _ values: [String], to writer: inout JSONWriter) {
        guard !values.isEmpty else { return }
        writer.key(key)
        writer.stringArray(values)
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
        if !category.isEmpty { return "category" }
        if !threadID.isEmpty { return "thread_id" }
        if contentAvailable { return "content_available" }
        if mutableContent { return "mutable_content" }
        if !interruptionLevel.isEmpty { return "interruption_level" }
        if !dataJSON.isEmpty { return "data_json" }
        return nil
    }
}
