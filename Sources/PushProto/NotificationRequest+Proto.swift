import CPushgateProto
public import PushCore

extension NotificationRequest {
    /// The domain form of a protobuf notification, field for field; nil when its push type is a
    /// number no ``PushType`` has (the one thing the wire can hold that the domain cannot). Shared
    /// by the gateway and the fuzz targets, so both check the same conversion.
    ///
    /// Through the notification's C message: one mapping (``assign(c:)``) serves this and Send,
    /// which reads its requests where protobuf-c unpacked them (``SendRequestMessage``).
    public init?(proto n: borrowing PushgateV1.Notification) {
        self.init()
        let assigned = ProtoCArena.with { arena in
            // A Swift value's strings are valid UTF-8: the mapping's one failure cannot happen here.
            try? assign(c: n.cMessage(in: arena))
        }
        guard assigned == true else { return nil }
    }

    /// Sets every field from `m` (into a value made with `init()`: the defaults it replaces are
    /// empty); false when `m`'s push type is a number no ``PushType`` has, and then nothing is set.
    ///
    /// In place rather than an initializer: an initializer of a struct this large (from another
    /// module, so not inlined) built the value and then copied it out to the caller, a retain and
    /// a release for each of its two dozen fields, on every notification of every Send. A string
    /// field left empty keeps `init()`'s `""` (most are).
    /// - Throws: naming the first string field that is not valid UTF-8 (proto3 requires it and
    ///   protobuf-c does not check it; see ``ProtoC/string(_:field:)``).
    mutating func assign(c m: UnsafePointer<Pushgate__V1__Notification>) throws(ProtoDecodingError) -> Bool {
        let wireType = PushgateV1.PushType(rawValue: Int32(truncatingIfNeeded: m.pointee.push_type.rawValue))
        if wireType == .unspecified {
            pushType = nil
        } else if let known = wireType.domain {
            pushType = known
        } else {
            return false
        }
        try ProtoC.string(m.pointee.app, field: "app", into: &app)
        if m.pointee.n_tokens > 0 {
            tokens = try ProtoC.array(m.pointee.tokens, count: m.pointee.n_tokens) {
                (e) throws(ProtoDecodingError) in try ProtoC.string(e, field: "tokens")
            }
        }
        if let a = m.pointee.alert {
            alert = NotificationRequest.Alert(
                title: try ProtoC.string(a.pointee.title, field: "title"),
                subtitle: try ProtoC.string(a.pointee.subtitle, field: "subtitle"),
                body: try ProtoC.string(a.pointee.body, field: "body"),
                launchImage: try ProtoC.string(a.pointee.launch_image, field: "launch_image"),
                titleLocKey: try ProtoC.string(a.pointee.title_loc_key, field: "title_loc_key"),
                titleLocArgs: try Self.strings(a.pointee.title_loc_args, a.pointee.n_title_loc_args, "title_loc_args"),
                locKey: try ProtoC.string(a.pointee.loc_key, field: "loc_key"),
                locArgs: try Self.strings(a.pointee.loc_args, a.pointee.n_loc_args, "loc_args"),
                image: try ProtoC.string(a.pointee.image, field: "image"),
                actionLocKey: try ProtoC.string(a.pointee.action_loc_key, field: "action_loc_key"))
        }
        // badge is a proto3 `optional`: its case says whether it was sent (the generated decode's test).
        if m.pointee.badge_value_case.rawValue == 4 { badge = m.pointee.badge }
        try ProtoC.string(m.pointee.sound, field: "sound", into: &sound)
        try ProtoC.string(m.pointee.category, field: "category", into: &category)
        try ProtoC.string(m.pointee.thread_id, field: "thread_id", into: &threadID)
        contentAvailable = m.pointee.content_available != 0
        mutableContent = m.pointee.mutable_content != 0
        try ProtoC.string(m.pointee.interruption_level, field: "interruption_level", into: &interruptionLevel)
        try ProtoC.string(m.pointee.data_json, field: "data_json", into: &dataJSON)
        try ProtoC.string(m.pointee.payload_json, field: "payload_json", into: &payloadJSON)
        priority = m.pointee.priority
        expiration = m.pointee.expiration
        try ProtoC.string(m.pointee.collapse_id, field: "collapse_id", into: &collapseID)
        try ProtoC.string(m.pointee.topic, field: "topic", into: &topic)
        try ProtoC.string(m.pointee.id, field: "id", into: &id)
        try ProtoC.string(m.pointee.urgency, field: "urgency", into: &urgency)
        if let l = m.pointee.live_activity {
            liveActivity = NotificationRequest.LiveActivity(
                event: try ProtoC.string(l.pointee.event, field: "event"),
                contentStateJSON: try ProtoC.string(l.pointee.content_state_json, field: "content_state_json"),
                timestamp: l.pointee.timestamp, staleDate: l.pointee.stale_date,
                dismissalDate: l.pointee.dismissal_date,
                relevanceScore: l.pointee.relevance_score_value_case.rawValue == 6 ? l.pointee.relevance_score : nil,
                attributesType: try ProtoC.string(l.pointee.attributes_type, field: "attributes_type"),
                attributesJSON: try ProtoC.string(l.pointee.attributes_json, field: "attributes_json"),
                inputPushToken: l.pointee.input_push_token != 0,
                inputPushChannel: try ProtoC.string(l.pointee.input_push_channel, field: "input_push_channel"))
        }
        if let c = m.pointee.critical_sound {
            criticalSound = CriticalSound(volume: c.pointee.volume_value_case.rawValue == 1 ? c.pointee.volume : nil)
        }
        if let f = m.pointee.fcm {
            fcm = FCMOptions(
                androidIcon: try ProtoC.string(f.pointee.android_icon, field: "android_icon"),
                androidColor: try ProtoC.string(f.pointee.android_color, field: "android_color"),
                androidTag: try ProtoC.string(f.pointee.android_tag, field: "android_tag"),
                androidChannelID: try ProtoC.string(f.pointee.android_channel_id, field: "android_channel_id"),
                analyticsLabel: try ProtoC.string(f.pointee.analytics_label, field: "analytics_label"))
        }
        if let w = m.pointee.webpush {
            webPush = WebPushOptions(
                declarative: w.pointee.declarative != 0,
                navigate: try ProtoC.string(w.pointee.navigate, field: "navigate"),
                lang: try ProtoC.string(w.pointee.lang, field: "lang"),
                dir: try ProtoC.string(w.pointee.dir, field: "dir"),
                silent: w.pointee.silent != 0, mutable: w.pointee.mutable_ != 0)
        }
        try ProtoC.string(m.pointee.filter_criteria, field: "filter_criteria", into: &filterCriteria)
        return true
    }

    /// A repeated string field (empty when `count` is 0).
    private static func strings(
        _ elements: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ count: Int, _ field: StaticString
    ) throws(ProtoDecodingError) -> [String] {
        guard count > 0 else { return [] }
        return try ProtoC.array(elements, count: count) { (e) throws(ProtoDecodingError) in
            try ProtoC.string(e, field: field)
        }
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
