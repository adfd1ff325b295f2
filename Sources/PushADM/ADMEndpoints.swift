public import PushTransport

extension HTTPSOrigin {
    /// Amazon's ADM host; Login with Amazon's token endpoint is on it too (docs/providers.md D.1).
    public static let admProduction = HTTPSOrigin(host: "api.amazon.com", port: 443)
}
