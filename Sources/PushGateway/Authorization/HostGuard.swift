/// The `Host` names a gateway without `api_keys` answers on its Connect and HTTP routes (where a
/// browser could reach it). Without keys every loopback client is an admin; a web page whose own
/// host name an attacker points at 127.0.0.1 (DNS rebinding) would be one too, through the
/// visitor's browser, which sends that name as `Host`. So then only names that cannot be rebound
/// are taken: IP literals, `localhost` and `*.localhost` (RFC 6761), with any port. With keys
/// every name is taken: a key is what authorizes then.
enum HostGuard {
    static func allows(_ host: String) -> Bool {
        var name = Substring(host)
        if name.hasPrefix("[") { return true }  // an IPv6 literal, `[::1]:50051`
        if let colon = name.lastIndex(of: ":"), name[name.index(after: colon)...].allSatisfy(\.isNumber) {
            name = name[..<colon]
        }
        let lower = name.lowercased()
        if lower == "localhost" || lower.hasSuffix(".localhost") { return true }
        let parts = lower.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
