import PushCore
import PushProto

/// The fields of one gorush notification: the alert, the scalars, the sound, FCM options and the
/// Live Activity keys (docs/api.md's gorush table).
extension GorushRequest {
    /// `message`/`title`/`image`, the iOS `alert` object and the Android `notification` object.
    static func alert(
        _ object: ConfigObject, message: String, platform: Platform, path: String
    ) throws(Refusal) -> PushgateV1.Alert? {
        var alert = PushgateV1.Alert()
        alert.body = message
        alert.title = try read { () throws(ConfigurationError) in try object.string("title") } ?? ""
        alert.image = try read { () throws(ConfigurationError) in try object.string("image") } ?? ""
        if let value = object.value("alert") {
            guard platform == .ios else { throw Refusal(message: "\(path).alert: only for platform 1 (iOS)") }
            let fields = try Self.object(value, path: path + ".alert")
            try check(
                fields,
                known: [
                    "title", "body", "subtitle", "launch-image", "loc-key", "loc-args", "title-loc-key",
                    "title-loc-args",
                    "action-loc-key",
                ],
                unsupported: [
                    "action": "Safari's legacy push (action) is not supported",
                    "summary-arg": "deprecated by Apple since iOS 15; not supported",
                    "summary-arg-count": "deprecated by Apple since iOS 15; not supported",
                ])
            // As gorush: the alert object's title and body win over `title` and `message`.
            try read { () throws(ConfigurationError) in
                if let title = try fields.string("title"), !title.isEmpty { alert.title = title }
                if let body = try fields.string("body"), !body.isEmpty { alert.body = body }
                alert.subtitle = try fields.string("subtitle") ?? ""
                alert.launchImage = try fields.string("launch-image") ?? ""
                alert.locKey = try fields.string("loc-key") ?? ""
                alert.locArgs = try fields.strings("loc-args") ?? []
                alert.titleLocKey = try fields.string("title-loc-key") ?? ""
                alert.titleLocArgs = try fields.strings("title-loc-args") ?? []
                alert.actionLocKey = try fields.string("action-loc-key") ?? ""
            }
        }
        if let value = object.value("notification") {
            guard platform == .android else {
                throw Refusal(message: "\(path).notification: only for platform 2 (Android)")
            }
            let fields = try Self.object(value, path: path + ".notification")
            try check(
                fields,
                known: [
                    "title", "body", "image", "title_loc_key", "title_loc_args", "body_loc_key", "body_loc_args",
                    "icon",
                    "color", "tag", "click_action", "channel_id",
                ], unsupported: [:])
            // As gorush: `title`, `message` and `image` win over the notification object's.
            try read { () throws(ConfigurationError) in
                if alert.title.isEmpty { alert.title = try fields.string("title") ?? "" }
                if alert.body.isEmpty { alert.body = try fields.string("body") ?? "" }
                if alert.image.isEmpty { alert.image = try fields.string("image") ?? "" }
                alert.titleLocKey = try fields.string("title_loc_key") ?? ""
                alert.titleLocArgs = try fields.strings("title_loc_args") ?? []
                alert.locKey = try fields.string("body_loc_key") ?? ""
                alert.locArgs = try fields.strings("body_loc_args") ?? []
            }
        }
        return alert == PushgateV1.Alert() ? nil : alert
    }

    /// The Android `notification` object's look and `fcm_options`' analytics label, as `fcm`.
    private static func fcmOptions(
        _ object: ConfigObject, into n: inout PushgateV1.Notification, platform: Platform, path: String
    )
        throws(Refusal)
    {
        var options = PushgateV1.FCMOptions()
        if let value = object.value("notification") {
            let fields = try Self.object(value, path: path + ".notification")
            try read { () throws(ConfigurationError) in
                options.androidIcon = try fields.string("icon") ?? ""
                options.androidColor = try fields.string("color") ?? ""
                options.androidTag = try fields.string("tag") ?? ""
                options.androidChannelID = try fields.string("channel_id") ?? ""
                if let action = try fields.string("click_action"), !action.isEmpty {
                    guard n.category.isEmpty || n.category == action else {
                        throw ConfigurationError("\(path).notification.click_action: differs from category")
                    }
                    n.category = action
                }
            }
        }
        if let value = object.value("fcm_options") {
            guard platform == .android else {
                throw Refusal(message: "\(path).fcm_options: only for platform 2 (Android)")
            }
            let fields = try Self.object(value, path: path + ".fcm_options")
            try check(fields, known: ["analytics_label"], unsupported: [:])
            options.analyticsLabel =
                try read { () throws(ConfigurationError) in try fields.string("analytics_label") } ?? ""
        }
        if options != PushgateV1.FCMOptions() { n.fcm = options }
    }

    /// The single-valued keys.
    static func mapScalars(
        _ object: ConfigObject, into n: inout PushgateV1.Notification, platform: Platform, path: String
    ) throws(Refusal) {
        try read { () throws(ConfigurationError) in
            switch try object.string("priority") ?? "" {
            case "": break
            case "high": n.priority = 10
            case "normal": n.priority = 5
            case let other:
                throw ConfigurationError("\(path).priority: must be normal or high, not \(TextCap.quoted(other))")
            }
            n.contentAvailable = try object.bool("content_available") ?? false
            n.mutableContent = try object.bool("mutable_content") ?? false
            n.category = try object.string("category") ?? ""
            n.threadID = try object.string("thread-id") ?? ""
            n.interruptionLevel = try object.string("interruption_level") ?? ""
            n.collapseID = try object.string("collapse_id") ?? ""
            n.id = try object.string("apns_id") ?? ""
            if platform == .ios { n.topic = try object.string("topic") ?? "" }
            if let expiration = try object.int("expiration", range: 0...Int(Int64.max)) {
                n.expiration = Int64(expiration)
            }
            // gorush sends a negative badge as no badge; a typo'd -1 is better refused than ignored.
            if let badge = try object.int("badge", range: 0...Int(Int32.max)) { n.badge = Int32(badge) }
            // Pushgate retries by its own policy (3 sends with backoff); gorush's count is accepted.
            _ = try object.int("retry", range: 0...Int(Int32.max))
        }
        if let type = try read({ () throws(ConfigurationError) in try object.string("push_type") }), !type.isEmpty {
            guard let pushType = PushType(rawValue: type) else {
                throw Refusal(
                    message:
                        "\(path).push_type: unknown APNs push type \(TextCap.quoted(type)) (one of \(PushType.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            n.pushType = PushgateV1.PushType(pushType)
        }
        try sound(object, into: &n, path: path)
        try fcmOptions(object, into: &n, platform: platform, path: path)
        if let data = object.value("data") {
            guard case .object(let members) = data else {
                throw Refusal(message: "\(path).data: expected a JSON object")
            }
            // FCM data values are strings; gorush sends the others as their JSON text, and so does this.
            let values =
                platform != .ios
                ? members.map { key, value in
                    if case .string = value { (key, value) } else { (key, JSONValue.string(encode(value))) }
                } : members
            if !values.isEmpty { n.dataJSON = encode(.object(values)) }
        }
    }

    /// `sound`: a name, or gorush's `{"name", "critical", "volume"}` object; `name` and `volume`
    /// as gorush's top-level sound keys. `critical: 1` makes it a critical alert.
    private static func sound(_ object: ConfigObject, into n: inout PushgateV1.Notification, path: String)
        throws(Refusal)
    {
        var name = try read { () throws(ConfigurationError) in try object.string("name") } ?? ""
        var volume = try number(object, "volume", path: path)
        var critical = false
        switch object.value("sound") {
        case nil: break
        case .string(let sound)?:
            if !sound.isEmpty { name = sound }
        case let value?:
            let fields = try Self.object(value, path: path + ".sound")
            try check(fields, known: ["name", "critical", "volume"], unsupported: [:])
            try read { () throws(ConfigurationError) in
                critical = try fields.int("critical", range: 0...1) == 1
                if let sound = try fields.string("name"), !sound.isEmpty { name = sound }
            }
            volume = try number(fields, "volume", path: path + ".sound") ?? volume
        }
        n.sound = name
        if critical {
            var sound = PushgateV1.CriticalSound()
            sound.volume = volume
            n.criticalSound = sound
        } else if volume != nil, volume != 0 {
            // gorush writes a volume into the sound dictionary; APNs plays it only for a critical alert.
            throw Refusal(message: "\(path).sound.volume: APNs plays a volume only for a critical sound (critical: 1)")
        }
    }

    private static func number(_ object: ConfigObject, _ key: String, path: String) throws(Refusal) -> Double? {
        guard let value = object.value(key) else { return nil }
        guard case .number(let text) = value, let number = Double(text) else {
            throw Refusal(message: "\(path).\(key): expected a number")
        }
        return number
    }

    /// The Live Activity keys, gathered into `live_activity` when any is set.
    static func mapLiveActivity(
        _ object: ConfigObject, into n: inout PushgateV1.Notification, path: String
    ) throws(Refusal) {
        var activity = PushgateV1.LiveActivity()
        try read { () throws(ConfigurationError) in
            activity.event = try object.string("event") ?? ""
            activity.timestamp = Int64(try object.int("timestamp", range: 0...Int(Int64.max)) ?? 0)
            activity.staleDate = Int64(try object.int("stale-date", range: 0...Int(Int64.max)) ?? 0)
            activity.dismissalDate = Int64(try object.int("dismissal-date", range: 0...Int(Int64.max)) ?? 0)
            activity.attributesType = try object.string("attributes-type") ?? ""
        }
        for (key, field) in [
            ("content-state", \PushgateV1.LiveActivity.contentStateJSON), ("attributes", \.attributesJSON),
        ] {
            guard let value = object.value(key) else { continue }
            guard case .object = value else { throw Refusal(message: "\(path).\(key): expected a JSON object") }
            activity[keyPath: field] = encode(value)
        }
        activity.relevanceScore = try number(object, "relevance-score", path: path)
        if activity != PushgateV1.LiveActivity() { n.liveActivity = activity }
    }
}
