public import PushTransport

extension HTTPSOrigin {
    /// Apple's production host.
    public static let apnsProduction = HTTPSOrigin(host: "api.push.apple.com", port: 443)
    /// Apple's development (sandbox) host.
    public static let apnsSandbox = HTTPSOrigin(host: "api.sandbox.push.apple.com", port: 443)
    /// Apple's channel management host, production (docs/providers.md A.9).
    public static let apnsChannelsProduction = HTTPSOrigin(host: "api-manage-broadcast.push.apple.com", port: 2196)
    /// Apple's channel management host, development (sandbox).
    public static let apnsChannelsSandbox = HTTPSOrigin(host: "api-manage-broadcast.sandbox.push.apple.com", port: 2195)
}
