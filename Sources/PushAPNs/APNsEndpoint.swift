/// Where an app's notifications go: Apple's production or sandbox host, or an override such as a
/// mock on loopback.
public struct APNsEndpoint: Sendable, Equatable {
    public static let production = APNsEndpoint(host: "api.push.apple.com", port: 443)
    public static let sandbox = APNsEndpoint(host: "api.sandbox.push.apple.com", port: 443)

    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `https://host[:port]` (a trailing `/` is allowed; no path). IPv6 literals in brackets.
    public init?(url: String) {
        guard url.hasPrefix("https://") else { return nil }
        var rest = url.dropFirst("https://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty, !rest.contains("/") else { return nil }
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if after.isEmpty {
                port = 443
            } else {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()), (1...65535).contains(value) else {
                    return nil
                }
                port = value
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = String(rest[..<colon])
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65535).contains(value) else { return nil }
            port = value
        } else {
            host = String(rest)
            port = 443
        }
        guard !host.isEmpty else { return nil }
    }

    /// The `:authority` pseudo-header: the host, with the port when it is not 443.
    public var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? name : "\(name):\(port)"
    }
}
