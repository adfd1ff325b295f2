/// The payload of a Live Activity push (docs/providers.md A.8), built once per notification:
///
/// `{"aps":{"timestamp":T,"event":"update","content-state":{…},"stale-date":S,"dismissal-date":D,
/// "relevance-score":R,"attributes-type":"…","attributes":{…},"input-push-token":1,
/// "input-push-channel":"…","alert":{"title":…,"body":…,"sound":"…"}}}`, only the members set.
///
/// What Apple requires is checked here and named by field: `event` one of start, update, end;
/// `content_state_json` a JSON object, required for start and update; `attributes_type` and
/// `attributes_json` (an object) together and only with start, where both are required;
/// `input_push_token` and `input_push_channel` only with start, not both; `dismissal_date` only
/// with end; no negative dates; a finite, non-negative `relevance_score`. The alert may have a
/// title and a body, each a string or a loc key with its args (`{"loc-key":…,"loc-args":[…]}`),
/// and `sound` goes inside it, as ActivityKit reads it. Fields a Live Activity has no place for
/// (badge, category, thread_id, content_available, mutable_content, interruption_level, data_json,
/// payload_json, subtitle, launch_image) are refused. The push type is `liveactivity` (an explicit
/// other type is refused) and the topic `<bundle id>.push-type.liveactivity`.
enum LiveActivityPayload {
    static func build(_ n: NotificationRequest, _ activity: NotificationRequest.LiveActivity, now: Int64)
        throws(ValidationError) -> [UInt8]
    {
        if let field = n.firstFieldLiveActivityRefuses {
            throw ValidationError(field: field, message: "cannot be set with live_activity")
        }
        guard let event = NotificationRequest.LiveActivity.Event(rawValue: activity.event) else {
            throw ValidationError(field: "live_activity.event", message: "must be start, update or end")
        }
        let contentState = try object(activity.contentStateJSON, field: "live_activity.content_state_json")
        if contentState == nil, event != .end {
            throw ValidationError(
                field: "live_activity.content_state_json",
                message: "is required for \(event.rawValue): the activity's ContentState as a JSON object")
        }
        try checkStartOnly(activity, event: event)
        let attributes = try object(activity.attributesJSON, field: "live_activity.attributes_json")
        for (field, value) in [
            ("timestamp", activity.timestamp), ("stale_date", activity.staleDate),
            ("dismissal_date", activity.dismissalDate),
        ] where value < 0 {
            throw ValidationError(field: "live_activity.\(field)", message: "must not be negative (Unix seconds)")
        }
        if activity.dismissalDate != 0, event != .end {
            throw ValidationError(field: "live_activity.dismissal_date", message: "is only for event end")
        }
        if let score = activity.relevanceScore, !score.isFinite || score < 0 {
            throw ValidationError(field: "live_activity.relevance_score", message: "must be a number of 0 or more")
        }

        var writer = JSONWriter(reservingCapacity: 256 + activity.contentStateJSON.utf8.count)
        writer.beginObject()
        writer.key("aps")
        writer.beginObject()
        writer.key("timestamp")
        writer.int(activity.timestamp == 0 ? now : activity.timestamp)
        writer.key("event")
        writer.string(event.rawValue)
        if let contentState {
            writer.key("content-state")
            writer.value(contentState)
        }
        if activity.staleDate != 0 {
            writer.key("stale-date")
            writer.int(activity.staleDate)
        }
        if activity.dismissalDate != 0 {
            writer.key("dismissal-date")
            writer.int(activity.dismissalDate)
        }
        if let score = activity.relevanceScore {
            writer.key("relevance-score")
            writer.raw(score.rounded() == score && abs(score) < 1e15 ? String(Int64(score)) : "\(score)")
        }
        writer.member("attributes-type", nonEmpty: activity.attributesType)
        if let attributes {
            writer.key("attributes")
            writer.value(attributes)
        }
        if activity.inputPushToken {
            writer.key("input-push-token")
            writer.int(1)
        }
        writer.member("input-push-channel", nonEmpty: activity.inputPushChannel)
        writeAlert(n, to: &writer)
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    /// What only a push-to-start may carry, and what it must.
    private static func checkStartOnly(
        _ activity: NotificationRequest.LiveActivity, event: NotificationRequest.LiveActivity.Event
    ) throws(ValidationError) {
        guard event == .start else {
            for (field, set) in [
                ("attributes_type", !activity.attributesType.isEmpty),
                ("attributes_json", !activity.attributesJSON.isEmpty),
                ("input_push_token", activity.inputPushToken),
                ("input_push_channel", !activity.inputPushChannel.isEmpty),
            ] where set {
                throw ValidationError(
                    field: "live_activity.\(field)", message: "is only for event start (push-to-start)")
            }
            return
        }
        guard !activity.attributesType.isEmpty else {
            throw ValidationError(
                field: "live_activity.attributes_type",
                message: "is required for start: the name of the app's ActivityAttributes type")
        }
        guard !activity.attributesJSON.isEmpty else {
            throw ValidationError(
                field: "live_activity.attributes_json",
                message: "is required for start: the ActivityAttributes value as a JSON object")
        }
        if activity.inputPushToken, !activity.inputPushChannel.isEmpty {
            throw ValidationError(
                field: "live_activity.input_push_channel",
                message: "cannot be set with input_push_token: an activity updates by its token or by a channel")
        }
    }

    /// `text` parsed as a JSON object; nil when empty.
    private static func object(_ text: String, field: String) throws(ValidationError) -> JSONValue? {
        guard !text.isEmpty else { return nil }
        let value: JSONValue
        do throws(JSONError) {
            value = try JSONParser.parse(text.utf8)
        } catch {
            throw ValidationError(field: field, message: error.description)
        }
        guard value.objectMembers != nil else { throw ValidationError(field: field, message: "must be a JSON object") }
        return value
    }

    /// The alert of a Live Activity: title and body, each a string or a localized key, and the sound.
    private static func writeAlert(_ n: NotificationRequest, to writer: inout JSONWriter) {
        let alert = n.alert ?? NotificationRequest.Alert()
        guard
            !alert.title.isEmpty || !alert.body.isEmpty || !alert.titleLocKey.isEmpty || !alert.locKey.isEmpty
                || !n.sound.isEmpty
        else { return }
        writer.key("alert")
        writer.beginObject()
        writeText("title", text: alert.title, locKey: alert.titleLocKey, locArgs: alert.titleLocArgs, to: &writer)
        writeText("body", text: alert.body, locKey: alert.locKey, locArgs: alert.locArgs, to: &writer)
        writer.member("sound", nonEmpty: n.sound)
        writer.endObject()
    }

    private static func writeText(
        _ key: String, text: String, locKey: String, locArgs: [String], to writer: inout JSONWriter
    ) {
        if !locKey.isEmpty {
            writer.key(key)
            writer.beginObject()
            writer.key("loc-key")
            writer.string(locKey)
            writer.member("loc-args", nonEmpty: locArgs)
            writer.endObject()
        } else {
            writer.member(key, nonEmpty: text)
        }
    }
}

extension NotificationRequest {
    /// The first set field a Live Activity push has no place for, by its proto name.
    var firstFieldLiveActivityRefuses: String? {
        if !payloadJSON.isEmpty { return "payload_json" }
        if badge != nil { return "badge" }
        if !category.isEmpty { return "category" }
        if !threadID.isEmpty { return "thread_id" }
        if contentAvailable { return "content_available" }
        if mutableContent { return "mutable_content" }
        if !interruptionLevel.isEmpty { return "interruption_level" }
        if !dataJSON.isEmpty { return "data_json" }
        if criticalSound != nil { return "critical_sound" }
        if let alert {
            if !alert.subtitle.isEmpty { return "alert.subtitle" }
            if !alert.launchImage.isEmpty { return "alert.launch_image" }
            if !alert.image.isEmpty { return "alert.image" }
            if !alert.actionLocKey.isEmpty { return "alert.action_loc_key" }
            if !alert.titleLocKey.isEmpty, !alert.title.isEmpty { return "alert.title" }
            if !alert.locKey.isEmpty, !alert.body.isEmpty { return "alert.body" }
        }
        return nil
    }
}
