import PushCore
import PushProto

/// gorush's `POST /api/push` body, mapped onto one Send, so that a caller written for gorush
/// (github.com/appleboy/gorush, its `notify.PushNotification` fields) works unchanged.
///
/// `platform` 1 goes to the first `apns` app, 2 to the first `fcm` app and 3 (Huawei) to the first
/// `hms` app, unless the extra `app`
/// key names one (of that platform). `production` / `development` pick the first APNs app of that
/// environment. What maps where is docs/api.md's gorush table; what Pushgate cannot carry is refused
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
        "huawei_data": "raw Huawei blocks are not supported; use data, title, message and image",
        "huawei_notification": "raw Huawei blocks are not supported; use data, title, message and image",
        "huawei_collapse_key": "Huawei's collapse key is not mapped", "huawei_ttl": "use expiration",
        "app_id": "the hms app's credentials are in the gateway's config (app_id, client_secret_file)",
        "app_secret": "the hms app's credentials are in the gateway's config (app_id, client_secret_file)",
        "bi_tag": "Huawei's bi_tag is not mapped", "fast_app_target": "Huawei quick apps are not supported",
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
                message:
                    "\(path): unknown key \(key.debugDescription) (docs/api.md lists the gorush keys Pushgate takes)")
        }
        let number = try read { () throws(ConfigurationError) in try object.int("platform", range: 0...Int(Int32.max)) }
        guard let number else {
            throw Refusal(message: "\(path).platform: required (1 = iOS, 2 = Android, 3 = Huawei)")
        }
        guard let platform = Platform(rawValue: number) else {
            throw Refusal(message: "\(path).platform: must be 1 (iOS), 2 (Android) or 3 (Huawei)")
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
        if platform == .huawei, !topic.isEmpty {
            throw Refusal(message: "\(path).topic: Huawei Push Kit topics are not supported; send to tokens")
        }
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
            platform: platform == .ios ? "ios" : platform == .huawei ? "huawei" : "android",
            message: Self.echoed(message), notifID: notifID)
        return (n, echo)
    }

    /// The app: `app` when given (it must be of the platform), else the first of the platform and
    /// environment.
    private static func app(
        _ object: ConfigObject, platform: Platform, path: String, configuration: GatewayConfiguration
    ) throws(Refusal) -> String {
        let wanted: AppConfiguration.Platform = platform == .ios ? .apns : platform == .huawei ? .hms : .fcm
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

    static func object(_ value: JSONValue, path: String) throws(Refusal) -> ConfigObject {
        // gorush (Go's encoding/json) reads null as "not set": the same here.
        guard case .object(let members) = value else { throw Refusal(message: "\(path): expected a JSON object") }
        return try read { () throws(ConfigurationError) in
            try ConfigObject(.object(members.filter { $0.1 != .null }), path: path)
        }
    }

    static func check(
        _ object: ConfigObject, known: Set<String>, unsupported: [String: String]
    ) throws(Refusal) {
        for (key, _) in object.members where unsupported[key] != nil {
            throw Refusal(message: "\(object.path).\(key): \(unsupported[key]!)")
        }
        try read { () throws(ConfigurationError) in try object.checkKeys(known) }
    }

    static func encode(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.encode(value), as: UTF8.self)
    }

    /// Runs `body`, its ``ConfigurationError`` (which names the key) becoming the 400's message.
    static func read<T>(_ body: () throws(ConfigurationError) -> T) throws(Refusal) -> T {
        do throws(ConfigurationError) { return try body() } catch { throw Refusal(message: error.description) }
    }
}
