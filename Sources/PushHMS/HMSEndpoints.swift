public import PushTransport

extension HTTPSOrigin {
    /// Push Kit's host for both APIs (docs/providers.md, Huawei H.2; no regional hosts were found).
    public static let hmsProduction = HTTPSOrigin(host: "push-api.cloud.huawei.com", port: 443)
}
