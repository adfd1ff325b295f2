import PushDelivery
public import PushTransport

extension HTTPSOrigin {
    /// Apple's production host.
    public static let apnsProduction = HTTPSOrigin(host: "api.push.apple.com", port: 443)
    /// Apple's development (sandbox) host.
    public static let apnsSandbox = HTTPSOrigin(host: "api.sandbox.push.apple.com", port: 443)
}
