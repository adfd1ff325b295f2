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
        writer.member(APSKeys.filterCriteria, nonEmpty: n.filterCriteria)
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
            && !mutableContent && interruptionLevel.isEmpty && filterCriteria.isEmpty
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
        if !filterCriteria.isEmpty { return "filter_criteria" }
        if !dataJSON.isEmpty { return "data_json" }
        return nil
    }
}

/// The `aps` keys, quoted (``JSONWriter/Key``).
private enum APSKeys {
    static var actionLocKey: JSONWriter.Key { .init(quoted: "\"action-loc-key\":") }
    static var alert: JSONWriter.Key { .init(quoted: "\"alert\":") }
    static var badge: JSONWriter.Key { .init(quoted: "\"badge\":") }
    static var body: JSONWriter.Key { .init(quoted: "\"body\":") }
    static var category: JSONWriter.Key { .init(quoted: "\"category\":") }
    static var contentAvailable: JSONWriter.Key { .init(quoted: "\"content-available\":") }
    static var critical: JSONWriter.Key { .init(quoted: "\"critical\":") }
    static var interruptionLevel: JSONWriter.Key { .init(quoted: "\"interruption-level\":") }
    static var filterCriteria: JSONWriter.Key { .init(quoted: "\"filter-criteria\":") }
    static var launchImage: JSONWriter.Key { .init(quoted: "\"launch-image\":") }
    static var locArgs: JSONWriter.Key { .init(quoted: "\"loc-args\":") }
    static var locKey: JSONWriter.Key { .init(quoted: "\"loc-key\":") }
    static var mutableContent: JSONWriter.Key { .init(quoted: "\"mutable-content\":") }
    static var name: JSONWriter.Key { .init(quoted: "\"name\":") }
    static var sound: JSONWriter.Key { .init(quoted: "\"sound\":") }
    static var subtitle: JSONWriter.Key { .init(quoted: "\"subtitle\":") }
    static var threadID: JSONWriter.Key { .init(quoted: "\"thread-id\":") }
    static var title: JSONWriter.Key { .init(quoted: "\"title\":") }
    static var titleLocArgs: JSONWriter.Key { .init(quoted: "\"title-loc-args\":") }
    static var titleLocKey: JSONWriter.Key { .init(quoted: "\"title-loc-key\":") }
    static var volume: JSONWriter.Key { .init(quoted: "\"volume\":") }
}
