/// The Amazon Resource Names of Pushgate's SNS API (docs/sns.md): made from the configured region
/// and account id, and read back from requests.
///
/// - platform application: `arn:aws:sns:{region}:{account}:app/{PLATFORM}/{app}`
/// - endpoint: `arn:aws:sns:{region}:{account}:endpoint/{PLATFORM}/{app}/{id}`
/// - topic: `arn:aws:sns:{region}:{account}:{name}`
/// - subscription: `arn:aws:sns:{region}:{account}:{name}:{id}`
///
/// `PLATFORM` is SNS's name for the app's platform (``PlatformKey``: `GCM` for FCM, and Pushgate's
/// own `WEBPUSH`). Reading checks the prefix and the shape only; whether the thing exists (and its
/// platform is the app's) is the caller's to check.
public struct SNSARNs: Sendable, Equatable {
    public let region: String
    public let accountID: String
    /// `arn:aws:sns:{region}:{account}:`
    public let prefix: String

    public init(region: String, accountID: String) {
        self.region = region
        self.accountID = accountID
        prefix = "arn:aws:sns:\(region):\(accountID):"
    }

    public func application(platform: PlatformKey, app: String) -> String {
        "\(prefix)app/\(platform.rawValue)/\(app)"
    }

    public func endpoint(platform: PlatformKey, app: String, id: String) -> String {
        endpoint(platformName: platform.rawValue, app: app, id: id)
    }

    /// With the platform's name as it is (an endpoint whose app is no longer configured has none).
    public func endpoint(platformName: String, app: String, id: String) -> String {
        "\(prefix)endpoint/\(platformName)/\(app)/\(id)"
    }

    public func topic(_ name: String) -> String { prefix + name }

    public func subscription(topic: String, id: String) -> String { "\(prefix)\(topic):\(id)" }

    /// A platform application's ARN: its platform and app name.
    public func readApplication(_ arn: String) -> (platform: PlatformKey, app: String)? {
        guard let rest = resource(arn, kind: "app/") else { return nil }
        let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let platform = PlatformKey(rawValue: String(parts[0])), !parts[1].isEmpty,
            !parts[1].contains("/")
        else { return nil }
        return (platform, String(parts[1]))
    }

    /// An endpoint's ARN: its platform's name (as written: an app no longer configured has none
    /// of ``PlatformKey``'s), app name and id.
    public func readEndpoint(_ arn: String) -> (platform: String, app: String, id: String)? {
        guard let rest = resource(arn, kind: "endpoint/") else { return nil }
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        return (String(parts[0]), String(parts[1]), String(parts[2]))
    }

    /// A topic's ARN: its name (not checked against the topic-name rules here).
    public func readTopic(_ arn: String) -> String? {
        guard let name = resource(arn, kind: ""), !name.isEmpty, !name.contains(":"), !name.contains("/") else {
            return nil
        }
        return String(name)
    }

    /// A subscription's ARN: its topic's name and its id.
    public func readSubscription(_ arn: String) -> (topic: String, id: String)? {
        guard let rest = resource(arn, kind: ""), !rest.contains("/") else { return nil }
        let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        return (String(parts[0]), String(parts[1]))
    }

    private func resource(_ arn: String, kind: String) -> Substring? {
        guard arn.hasPrefix(prefix) else { return nil }
        let rest = arn.dropFirst(prefix.count)
        guard rest.hasPrefix(kind) else { return nil }
        return rest.dropFirst(kind.count)
    }
}
