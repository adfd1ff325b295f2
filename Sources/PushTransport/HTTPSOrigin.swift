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

    /// `host[:port]` or `[v6]:port`. The host is a name or IPv4 address (letters, digits, `-`, `.`,
    /// `_`) or, in brackets, an IPv6 address; the port 1 to 65535 in digits. Anything else (an
    /// unbracketed IPv6 address, a query or `user@` left in the authority, `+443`) is no origin, so
    /// that a config mistake fails here, naming the key, instead of connecting somewhere else.
    private init?(authority rest: Substring) {
        let portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            guard host.utf8.allSatisfy(Self.isIPv6Byte), host.contains(":") else { return nil }
            let after = rest[rest.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return nil }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else {
            let colon = rest.firstIndex(of: ":")
            host = String(rest[..<(colon ?? rest.endIndex)])
            guard host.utf8.allSatisfy(Self.isNameByte) else { return nil }
            portText = colon.map { rest[rest.index(after: $0)...] }
        }
        guard !host.isEmpty else { return nil }
        if let portText {
            guard (1...5).contains(portText.utf8.count), portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(portText), (1...65535).contains(value)
            else { return nil }
            port = value
        } else {
            port = 443
        }
    }

    private static let nameBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._".utf8)
    private static let ipv6Bytes = Set("0123456789abcdefABCDEF:.".utf8)
    private static func isNameByte(_ byte: UInt8) -> Bool { nameBytes.contains(byte) }
    private static func isIPv6Byte(_ byte: UInt8) -> Bool { ipv6Bytes.contains(byte) }

    /// The `:authority` pseudo-header: the host, with the port when it is not 443.
    public var authority: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 443 ? name : "\(name):\(port)"
    }
}
