import PushCore
import PushProto

/// gorush's `POST /api/push` body, mapped onto one Send, so that a caller written for gorush
/// (github.com/appleboy/gorush, its `notify.PushNotification` fields) works unchanged.
///
/// `platform` 1 goes to the first `apns` app and 2 to the first `fcm` app, unless the extra `app`
/// key names one (of that platform). `production` / `development` pick the first APNs app of that
/// environment. What maps where is README's gorush table; what Pushgate cannot carry is refused
/// with a 400 naming the gorush key, never dropped. Keys gorush does not have are refused too:
/// gorush ignores them, and a misspelt key silently doing nothing is what a migration must catch.
struct GorushRequest {
    /// A request answered before any delivery: gorush's `{"code": 400, "message": …}`.
    struct Refusal: Error, Equatable {
        let message: String
    }

    /// What the answer's `logs` say of each notification (gorush echoes them per failed token).
    struct Echo: Equatable {
        /// `ios` or `android`, as gorush's logs name the platforms.
        var platform: String
        var message: String
        var notifID: String
    }

    /// gorush's answer repeats a notification's `notif_id` and `message` in the log entry of every
    /// token that failed: unbounded, a 0.34 MB request became a 400 MB answer. An id is an id
    /// (gorush's own are UUIDs), so a longer one is refused; a longer message is echoed cut, with
    /// `…` (the entry identifies the notification; the caller has the whole text).
    static let maxNotifIDBytes = 256
    static let maxEchoedMessageBytes = 256

    /// `message` as a log entry repeats it: whole, or its first ``maxEchoedMessageBytes`` bytes
    /// (whole characters) and `…`.
    static func echoed(_ message: String) -> String {
        guard message.utf8.count > maxEchoedMessageBytes else { return message }
        var cut = ""
        var bytes = 0
        for character in message {
            bytes += character.utf8.count
            guard bytes <= maxEchoedMessageBytes else { break }
            cut.append(character)
        }
        return cut + "…"
    }

    var send = PushgateV1.SendRequest()
    /// One per notification, in order.
    var echoes: [Echo] = []

    /// gorush's platform numbers (`core.PlatFormIos`, …).
    enum Platform: Int {
        case ios = 1
        case android = 2
        case huawei = 3
    }

    /// Keys gorush documents that Pushgate cannot carry, and why; refused with the reason.
    static let unsupported: [String: String] = [
        "condition": "FCM condition messages are not supported; send to tokens or a topic",
        "android":
            "raw FCM AndroidConfig blocks are not supported; use the gorush fields or Pushgate's Send with payload_json",
        "apns":
            "raw FCM APNSConfig blocks are not supported; use the gorush fields or Pushgate's Send with payload_json",
        "webpush": "raw FCM WebpushConfig blocks are not supported; use Pushgate's Send with a webpush app",
        "url-args": "Safari's legacy push (url-args) is not supported",
        "huawei_data": "Huawei (HMS) is not supported", "huawei_notification": "Huawei (HMS) is not supported",
        "huawei_collapse_key": "Huawei (HMS) is not supported", "huawei_ttl": "Huawei (HMS) is not supported",
        "app_id": "Huawei (HMS) is not supported", "app_secret": "Huawei (HMS) is not supported",
        "bi_tag": "Huawei (HMS) is not supported", "fast_app_target": "Huawei (HMS) is not supported",
    ]

    /// Every key of a notification this mapping reads.
    static let known: Set<String> = [
        "notif_id", "to", "topic", "tokens", "platform", "message", "title", "image", "priority",
        "content_available", "mutable_content", "sound", "data", "retry", "notification", "expiration", "apns_id",
        "collapse_id", "push_type", "badge", "category", "thread-id", "alert", "production", "development", "name",
        "interruption_level", "content-state", "stale-date", "dismissal-date", "event", "timestamp", "attributes-type",
        "attributes", "relevance-score", "app", "volume", "fcm_options",
    ]

    /// Parses and maps `body`; `configuration` supplies the apps the platforms go to.
    init(body: [UInt8], configuration: GatewayConfiguration) throws(Refusal) {
        let document: JSONValue
        do throws(JSONError) {
            document = try JSONParser.parse(body)
        } catch {
            throw Refusal(message: "Missing notifications field. (the body is not JSON: \(error))")
        }
        guard case .object(let members) = document, let list = members.last(where: { $0.0 == "notifications" })?.1
        else {
            throw Refusal(message: "Missing notifications field.")
        }
        guard case .array(let notifications) = list else {
            throw Refusal(message: "notifications: expected an array")
        }
        guard !notifications.isEmpty else { throw Refusal(message: "Notifications field is empty.") }
        for (index, value) in notifications.enumerated() {
            let (notification, echo) = try Self.map(
                value, path: "notifications[\(index)]", configuration: configuration)
            send.notifications.append(notification)
            echoes.append(echo)
        }
    }

    private static func map(
        _ value: JSONValue, path: String, configuration: GatewayConfiguration
    ) throws(Refusal) -> (PushgateV1.Notification, Echo) {
        let object = try Self.object(value, path: path)
        for (key, _) in object.members where !known.contains(key) {
            if let why = unsupported[key] { throw Refusal(message: "\(path).\(key): \(why)") }
            throw Refusal(
                message: "\(path): unknown key \(key.debugDescription) (README lists the gorush keys Pushgate takes)")
        }
        let number = try read { () throws(ConfigurationError) in try object.int("platform", range: 0...Int(Int32.max)) }
        guard let number else {
            throw Refusal(message: "\(path).platform: required (1 = iOS, 2 = Android)")
        }
        guard let platform = Platform(rawValue: number), platform != .huawei else {
            let what =
                number == Platform.huawei.rawValue
                ? "3 (Huawei HMS) is not supported" : "must be 1 (iOS) or 2 (Android)"
            throw Refusal(message: "\(path).platform: \(what)")
        }
        var n = PushgateV1.Notification()
        n.app = try app(object, platform: platform, path: path, configuration: configuration)
        var tokens = try read { () throws(ConfigurationError) in try object.strings("tokens") } ?? []
        if let to = try read({ () throws(ConfigurationError) in try object.string("to") }), !to.isEmpty {
            tokens.append(to)
        }
        // An Android topic is one more target, sent first as gorush does: FCM's `message.topic`.
        let topic = try read { () throws(ConfigurationError) in try object.string("topic") } ?? ""
        if platform == .android, !topic.isEmpty { tokens.insert(FCMToken.topicPrefix + topic, at: 0) }
        guard !tokens.isEmpty else {
            throw Refusal(
                message: "\(path).tokens: please provide at least one device token (or, for Android, a topic)")
        }
        n.tokens = tokens
        let message = try read { () throws(ConfigurationError) in try object.string("message") } ?? ""
        n.alert = try alert(object, message: message, platform: platform, path: path)
        try mapScalars(object, into: &n, platform: platform, path: path)
        try mapLiveActivity(object, into: &n, path: path)
        let notifID = try read { () throws(ConfigurationError) in try object.string("notif_id") } ?? ""
        guard notifID.utf8.count <= Self.maxNotifIDBytes else {
            throw Refusal(message: "\(path).notif_id: \(notifID.utf8.count) bytes, over \(Self.maxNotifIDBytes)")
        }
        let echo = Echo(
            platform: platform == .ios ? "ios" : "android", message: Self.echoed(message), notifID: notifID)
        return (n, echo)
    }

    /// The app: `app` when given (it must be of the platform), else the first of the platform and
    /// environment.
    private static func app(
        _ object: ConfigObject, platform: Platform, path: String, configuration: GatewayConfiguration
    ) throws(Refusal) -> String {
        let wanted: AppConfiguration.Platform = platform == .ios ? .apns : .fcm
        let production = try read { () throws(ConfigurationError) in try object.bool("production") } ?? false
        let development = try read { () throws(ConfigurationError) in try object.bool("development") } ?? false
        if production && development {
            throw Refusal(message: "\(path): production and development cannot both be true")
        }
        if (production || development) && platform != .ios {
            throw Refusal(message: "\(path).\(production ? "production" : "development"): only for platform 1 (iOS)")
        }
        func environmentFits(_ app: AppConfiguration) -> Bool {
            guard production || development, case .apns(let keys) = app.keys else { return true }
            return keys.sandbox == development
        }
        let environment = production ? " production" : development ? " sandbox" : ""
        if let name = try read({ () throws(ConfigurationError) in try object.string("app") }), !name.isEmpty {
            guard let app = configuration.app(named: name) else {
                throw Refusal(message: "\(path).app: unknown app \(TextCap.quoted(name))")
            }
            guard app.platform == wanted else {
                throw Refusal(
                    message:
                        "\(path).app: \(TextCap.quoted(name)) is a \(app.platform.rawValue) app, not \(wanted.rawValue)"
                )
            }
            guard environmentFits(app) else {
                throw Refusal(message: "\(path).app: \(TextCap.quoted(name)) is not a\(environment) APNs app")
            }
            return name
        }
        guard let app = configuration.apps.first(where: { $0.platform == wanted && environmentFits($0) }) else {
            throw Refusal(
                message:
                    "\(path).platform: no\(environment) \(wanted.rawValue) app is configured for platform \(platform.rawValue)"
            )
        }
        return app.name
    }

    /// `message`/`title`/`image`, the iOS `alert` object and the Android `notification` object.
    private static func alert(
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
    private static func mapScalars(
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
                platform == .android
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
    private static func mapLiveActivity(
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

    private static func object(_ value: JSONValue, path: String) throws(Refusal) -> ConfigObject {
        // gorush (Go's encoding/json) reads null as "not set": the same here.
        guard case .object(let members) = value else { throw Refusal(message: "\(path): expected a JSON object") }
        return try read { () throws(ConfigurationError) in
            try ConfigObject(.object(members.filter { $0.1 != .null }), path: path)
        }
    }

    private static func check(
        _ object: ConfigObject, known: Set<String>, unsupported: [String: String]
    ) throws(Refusal) {
        for (key, _) in object.members where unsupported[key] != nil {
            throw Refusal(message: "\(object.path).\(key): \(unsupported[key]!)")
        }
        try read { () throws(ConfigurationError) in try object.checkKeys(known) }
    }

    private static func encode(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.encode(value), as: UTF8.self)
    }

    /// Runs `body`, its ``ConfigurationError`` (which names the key) becoming the 400's message.
    private static func read<T>(_ body: () throws(ConfigurationError) -> T) throws(Refusal) -> T {
        do throws(ConfigurationError) { return try body() } catch { throw Refusal(message: error.description) }
    }
}
