import PushCore
import PushTransport

/// One entry of `webhooks` (docs/webhooks.md): where a webhook's batches go and which events.
public struct WebhookConfiguration: Sendable, Equatable {
    /// The events a webhook may ask for, by their config names.
    public enum EventKind: String, Sendable, CaseIterable {
        case endpointDisabled = "endpoint_disabled"
        case messageFinished = "message_finished"
        case rejected
        case failed
        case delivered
        case messageCancelled = "message_cancelled"
    }

    public static let defaultEvents: Set<EventKind> = [.endpointDisabled, .messageFinished, .rejected, .failed]

    public var name: String
    public var url: String
    public var secretFile: String
    public var events: Set<EventKind> = defaultEvents
    /// Only these apps' events; empty: every app.
    public var apps: Set<String> = []
    /// One `delivered` event in this many is sent.
    public var deliveredSampleEvery = 1
    public var caFile = ""
    public var proxy = ""
    public var batchSize = 100
    public var maxPending = 100_000
    public var maxAgeHours = 24
    public var timeoutMilliseconds = 10_000

    public init(name: String, url: String, secretFile: String) {
        self.name = name
        self.url = url
        self.secretFile = secretFile
    }

    static let keys: Set<String> = [
        "name", "url", "secret_file", "events", "apps", "delivered_sample_every", "ca_file", "proxy", "batch_size",
        "max_pending", "max_age_hours", "timeout_ms",
    ]

    /// The webhooks, names checked unique and apps checked against the configured ones.
    static func parseAll(_ values: [JSONValue], apps: Set<String>) throws(ConfigurationError) -> [WebhookConfiguration]
    {
        var webhooks: [WebhookConfiguration] = []
        var seen = Set<String>()
        for (index, value) in values.enumerated() {
            let path = "config.webhooks[\(index)]"
            let webhook = try parse(try ConfigObject(value, path: path), path: path, apps: apps)
            guard seen.insert(webhook.name).inserted else {
                throw ConfigurationError("\(path).name: duplicate webhook name \(webhook.name.debugDescription)")
            }
            webhooks.append(webhook)
        }
        return webhooks
    }

    static func parse(_ reader: ConfigObject, path: String, apps knownApps: Set<String>)
        throws(ConfigurationError) -> WebhookConfiguration
    {
        try reader.checkKeys(keys, context: "a webhook")
        guard let name = try reader.string("name") else { throw ConfigurationError("\(path).name: required") }
        guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy(isNameByte) else {
            throw ConfigurationError("\(path).name: \(TextCap.quoted(name)) must be 1-64 of a-z, 0-9, _ and -")
        }
        guard let url = try reader.string("url") else { throw ConfigurationError("\(path).url: required") }
        guard HTTPSOrigin.parse(url: url) != nil, url.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw ConfigurationError(
                "\(path).url: webhook URL \(TextCap.quoted(url)) is not an https://host[:port]/path URL (no spaces or "
                    + "control characters)")
        }
        guard let secretFile = try reader.string("secret_file"), !secretFile.isEmpty else {
            throw ConfigurationError("\(path).secret_file: required (a file holding the shared secret)")
        }
        var webhook = WebhookConfiguration(name: name, url: url, secretFile: secretFile)
        if let events = try reader.strings("events") {
            guard !events.isEmpty else {
                throw ConfigurationError("\(path).events: must name at least one event (or be left out)")
            }
            var kinds = Set<EventKind>()
            for (index, event) in events.enumerated() {
                guard let kind = EventKind(rawValue: event) else {
                    let known = EventKind.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ConfigurationError(
                        "\(path).events[\(index)]: \(TextCap.quoted(event)) is not an event (known: \(known))")
                }
                kinds.insert(kind)
            }
            webhook.events = kinds
        }
        if let apps = try reader.strings("apps") {
            for (index, app) in apps.enumerated() where !knownApps.contains(app) {
                throw ConfigurationError("\(path).apps[\(index)]: no app is named \(TextCap.quoted(app))")
            }
            webhook.apps = Set(apps)
        }
        if let n = try reader.int("delivered_sample_every", range: 1...1_000_000) { webhook.deliveredSampleEvery = n }
        webhook.caFile = try reader.string("ca_file") ?? ""
        webhook.proxy = try reader.string("proxy") ?? ""
        if let n = try reader.int("batch_size", range: 1...1000) { webhook.batchSize = n }
        if let n = try reader.int("max_pending", range: 1...100_000_000) { webhook.maxPending = n }
        if let n = try reader.int("max_age_hours", range: 1...8760) { webhook.maxAgeHours = n }
        if let n = try reader.int("timeout_ms", range: 100...600_000) { webhook.timeoutMilliseconds = n }
        guard webhook.maxPending >= webhook.batchSize else {
            throw ConfigurationError(
                "\(path).max_pending: webhook \(name)'s max_pending (\(webhook.maxPending)) is below its batch_size "
                    + "(\(webhook.batchSize)): the batch being sent counts and is never cut, so keep max_pending above it"
            )
        }
        return webhook
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    /// Whether the webhook wants events of `kind` about `app` (nil: an event about a message that
    /// may reach any app, a topic Publish's).
    func wants(_ kind: EventKind, apps eventApps: [String]?) -> Bool {
        guard events.contains(kind) else { return false }
        guard let eventApps, !apps.isEmpty else { return true }
        return eventApps.contains(where: apps.contains)
    }
}

/// The `delivery_log` object (docs/webhooks.md).
public struct DeliveryLogSettings: Sendable, Equatable {
    /// `enabled`: whether Publish outcomes are logged at all. Default true.
    public var enabled = true
    /// `success_sample_percent`: the share of successes logged, 0-100. Default 0.
    public var successSamplePercent: Double = 0
    /// `retention_hours`: rows older than this are purged. Default 72.
    public var retentionHours = 72

    public init() {}

    static func parse(_ reader: ConfigObject) throws(ConfigurationError) -> DeliveryLogSettings {
        try reader.checkKeys(["enabled", "success_sample_percent", "retention_hours"])
        var settings = DeliveryLogSettings()
        if let enabled = try reader.bool("enabled") { settings.enabled = enabled }
        if let value = reader.value("success_sample_percent") {
            guard case .number(let text) = value, let percent = Double(text), (0...100).contains(percent) else {
                throw ConfigurationError("\(reader.path).success_sample_percent: expected a number from 0 to 100")
            }
            settings.successSamplePercent = percent
        }
        if let n = try reader.int("retention_hours", range: 1...87_600) { settings.retentionHours = n }
        return settings
    }
}
