/// An HTTPS origin: a host and port. An app's endpoint (Apple's, Google's, or an override such as a
/// mock on loopback), a token endpoint's, or one a token names (a Web Push push service).
public struct HTTPSOrigin: Sendable, Hashable {

    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `https://host[:port]` (a trailing `/` is allowed; no path). IPv6 literals in brackets.
    public init?(url: String) {
        guard let (endpoint, path) = Self.parse(url: url), path == "/" else { return nil }
        self = endpoint
    }

    /// `https://host[:port][/path]`: the endpoint and the path (`/` when there is none), e.g. an
    /// OAuth2 token URL. No query or fragment.
    public static func parse(url: String) -> (HTTPSOrigin, path: String)? {
        guard url.hasPrefix("https://") else { return nil }
        var rest = url.dropFirst("https://".count)
        var path = "/"
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[slash...])
            rest = rest[..<slash]
        }
        guard !rest.isEmpty, !path.contains("?"), !path.contains("#"), !path.contains(" ") else { return nil }
        guard let endpoint = HTTPSOrigin(authority: rest) else { return nil }
        return (endpoint, path)
    }

    private init?(authority rest: Substring) {
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
