import PushDelivery

extension ProviderEndpoint {
    /// Apple's production host.
    public static let apnsProduction = ProviderEndpoint(host: "api.push.apple.com", port: 443)
    /// Apple's development (sandbox) host.
    public static let apnsSandbox = ProviderEndpoint(host: "api.sandbox.push.apple.com", port: 443)
}
